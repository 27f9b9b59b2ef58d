import { InferenceError, type InferenceErrorCode } from '@tritium/core';

/** A refusal at the HTTP layer itself (a wrong method, an oversized body) with its own status and headers. */
export class HttpError extends Error {
  override readonly name = 'HttpError';

  constructor(
    readonly status: number,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** Triton's mapping of error codes to HTTP statuses; the codes it has no status for are 400. */
const STATUS: Partial<Record<InferenceErrorCode, number>> = {
  INTERNAL: 500,
  NOT_FOUND: 404,
  UNAVAILABLE: 503,
  UNSUPPORTED: 501,
};

export function statusOf(error: unknown): number {
  if (error instanceof HttpError) return error.status;
  if (error instanceof InferenceError) return STATUS[error.code] ?? 400;
  return 500;
}

/** Triton's error body, `{"error": "<message>"}`. */
export function errorJson(error: unknown): string {
  return JSON.stringify({ error: error instanceof Error ? error.message : String(error) });
}
