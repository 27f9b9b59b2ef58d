import { Buffer } from 'node:buffer';
import type { ServerResponse } from 'node:http';
import { HttpError } from '../http/http-errors.js';
import { openAIErrorOf } from './openai-error.js';

export function sendOpenAIJson(res: ServerResponse, status: number, value: unknown): void {
  const json = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
  res.end(json);
}

/**
 * OpenAI's error answer. Nothing is written when the client has gone; a body already
 * under way is cut short, so that the client sees it fail.
 */
export function sendOpenAIError(res: ServerResponse, error: unknown): void {
  if (res.writableEnded || res.destroyed || !res.req.socket.writable) return;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (error instanceof HttpError) for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  const { status, body } = openAIErrorOf(error);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
