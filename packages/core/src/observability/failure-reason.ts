import type { InferenceError } from '../errors.js';

/** Triton's reasons for a failed request, as its nv_inference_request_failure metric spells them. */
export const FAILURE_REASONS = ['REJECTED', 'CANCELED', 'BACKEND', 'OTHER'] as const;
export type FailureReason = (typeof FAILURE_REASONS)[number];

/**
 * Why a request failed: a scheduler refused it (a full queue, a queue timeout, a
 * sequence it cannot take); the caller cancelled it or its deadline passed; it failed
 * in a backend's execution; or something else (an unload that gave up on it).
 */
export function failureReason(request: { rejected: boolean; executeStart: number }, error: InferenceError): FailureReason {
  if (request.rejected) return 'REJECTED';
  if (error.code === 'CANCELLED' || error.code === 'DEADLINE_EXCEEDED') return 'CANCELED';
  return request.executeStart > 0 ? 'BACKEND' : 'OTHER';
}
