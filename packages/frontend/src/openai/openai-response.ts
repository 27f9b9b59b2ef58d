import type { ServerResponse } from 'node:http';
import { sendErrorAs, sendJson } from '../http/responses.js';
import { openAIErrorOf } from './openai-error.js';

export function sendOpenAIJson(res: ServerResponse, status: number, value: unknown): void {
  sendJson(res, status, JSON.stringify(value));
}

/**
 * OpenAI's error answer, written as the HTTP frontend writes its errors: nothing when the
 * client has gone; a body already under way is cut short, so that the client sees it fail.
 */
export function sendOpenAIError(res: ServerResponse, error: unknown): void {
  sendErrorAs(res, error, openAIErrorOf);
}
