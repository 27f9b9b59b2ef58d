import { Buffer } from 'node:buffer';
import type { ServerResponse } from 'node:http';
import { errorJson, HttpError, statusOf } from './http-errors.js';

/** A JSON body, whole. */
export function sendJson(res: ServerResponse, status: number, json: string): void {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
  res.end(json);
}

/** Triton answers health checks, loads and registrations with a status and no body. */
export function sendEmpty(res: ServerResponse, status = 200): void {
  res.writeHead(status, { 'content-length': 0 });
  res.end();
}

/**
 * `{"error": ...}` with Triton's status for the error. Nothing is written when the
 * client has gone, or when the parser already answered a malformed request on the socket.
 */
export function sendError(res: ServerResponse, error: unknown): void {
  sendErrorAs(res, error, (e) => ({ status: statusOf(e), body: errorJson(e) }));
}

/** sendError with another protocol's status and JSON body for the error (the OpenAI frontend's). */
export function sendErrorAs(res: ServerResponse, error: unknown, render: (error: unknown) => { status: number; body: string }): void {
  // The connection's socket: a pipelined response has none of its own until its turn comes.
  if (res.writableEnded || res.destroyed || !res.req.socket.writable) return;
  if (res.headersSent) {
    // A body already under way cannot turn into an error: cut it short so the client sees it fail.
    res.destroy();
    return;
  }
  if (error instanceof HttpError) for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  const { status, body } = render(error);
  sendJson(res, status, body);
}
