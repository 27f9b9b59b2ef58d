import { InferenceError, type InferenceErrorCode } from '@tritium/core/backend';

/** An error as frames carry it (PROTOCOL.md): a code of InferenceError's set and a message. */
export interface FrameError {
  code: string;
  message: string;
}

const CODES: ReadonlySet<string> = new Set<InferenceErrorCode>([
  'INVALID_ARG',
  'NOT_FOUND',
  'UNAVAILABLE',
  'UNSUPPORTED',
  'INTERNAL',
  'CANCELLED',
  'DEADLINE_EXCEEDED',
  'ALREADY_EXISTS',
  'RESOURCE_EXHAUSTED',
]);

/**
 * The InferenceError a frame's error stands for, its message prefixed with where it happened;
 * without `where` (an error a model put in a response), the model's words alone, as Triton passes them.
 */
export function fromFrameError(error: unknown, where?: string): InferenceError {
  const { code, message } = (typeof error === 'object' && error !== null ? error : { message: String(error) }) as Partial<FrameError>;
  const known = typeof code === 'string' && CODES.has(code) ? (code as InferenceErrorCode) : 'INTERNAL';
  const text = message ?? 'unknown error';
  return new InferenceError(known, where === undefined ? text : `${where}: ${text}`);
}

/** A Node error as a frame carries it to the stub. */
export function toFrameError(error: unknown): FrameError {
  const failure = InferenceError.from(error);
  return { code: failure.code, message: failure.message };
}
