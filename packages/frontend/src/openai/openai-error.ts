import { InferenceError } from '@tritium/core';
import { statusOf } from '../http/http-errors.js';

/** OpenAI's error `type`s: a client's mistake, or the server's. */
export type OpenAIErrorType = 'invalid_request_error' | 'server_error';

/**
 * A refusal in OpenAI's terms: the HTTP status, and the body's `type`, `param` (the
 * request field at fault, when one is) and `code` (OpenAI's short name for the case).
 */
export class OpenAIError extends Error {
  override readonly name = 'OpenAIError';

  constructor(
    readonly status: number,
    message: string,
    readonly details: { readonly type?: OpenAIErrorType; readonly param?: string; readonly code?: string } = {},
  ) {
    super(message);
  }
}

/** A bad field of the request: 400, naming it. */
export function invalidField(param: string, message: string): OpenAIError {
  return new OpenAIError(400, message, { param, code: 'invalid_value' });
}

/** A field Tritium reads but does not implement for this request: 400, as Triton's frontend refuses what it does not support. */
export function unsupportedField(param: string, message: string): OpenAIError {
  return new OpenAIError(400, message, { param, code: 'unsupported_value' });
}

/** The status and OpenAI's body, `{"error": {message, type, param, code}}`, for any error. */
export function openAIErrorOf(error: unknown): { status: number; body: string } {
  const details: OpenAIError['details'] = error instanceof OpenAIError ? error.details : {};
  // Else as the HTTP frontend's statuses (the HTTP layer's own refusals, such as a body over the limit, among them), but a full queue is OpenAI's 429.
  const status = error instanceof OpenAIError ? error.status : error instanceof InferenceError && error.code === 'RESOURCE_EXHAUSTED' ? 429 : statusOf(error);
  const type = details.type ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
  const message = error instanceof Error ? error.message : String(error);
  const body = JSON.stringify({ error: { message, type, param: details.param ?? null, code: details.code ?? (error instanceof InferenceError ? error.code : null) } });
  return { status, body };
}
