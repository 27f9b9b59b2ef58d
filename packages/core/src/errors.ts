/** The closed set of error codes, after Triton's TRITONSERVER_Error codes and gRPC status names. */
export type InferenceErrorCode =
  | 'INVALID_ARG'
  | 'NOT_FOUND'
  | 'UNAVAILABLE'
  | 'UNSUPPORTED'
  | 'INTERNAL'
  | 'CANCELLED'
  | 'DEADLINE_EXCEEDED'
  | 'ALREADY_EXISTS'
  | 'RESOURCE_EXHAUSTED';

/** Marks InferenceErrors across copies of this module (an app's CJS and a backend's ESM build of core). */
const BRAND = Symbol.for('tritium.InferenceError');

/** The one error class Tritium throws; the message names the model, tensor or config field at fault. */
export class InferenceError extends Error {
  override readonly name = 'InferenceError';
  readonly [BRAND] = true;

  /** `instanceof` holds for an InferenceError made by any copy of @tritium/core loaded in the process. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && (value as { [BRAND]?: unknown })[BRAND] === true;
  }

  constructor(
    readonly code: InferenceErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** Wraps anything thrown by user or backend code, keeping an InferenceError as it is. */
  static from(error: unknown, code: InferenceErrorCode = 'INTERNAL', context?: string): InferenceError {
    if (error instanceof InferenceError) return error;
    const text = error instanceof Error ? error.message : String(error);
    return new InferenceError(code, context ? `${context}: ${text}` : text, { cause: error });
  }
}
