import { status, type StatusObject } from '@grpc/grpc-js';
import { InferenceError, type InferenceErrorCode } from '@tritium/core';

/**
 * Triton's mapping of its error codes to gRPC status codes (UNSUPPORTED is
 * UNIMPLEMENTED); the two codes Triton's C API lacks map to their gRPC namesakes.
 */
const STATUS_OF: Readonly<Record<InferenceErrorCode, status>> = {
  INVALID_ARG: status.INVALID_ARGUMENT,
  NOT_FOUND: status.NOT_FOUND,
  UNAVAILABLE: status.UNAVAILABLE,
  UNSUPPORTED: status.UNIMPLEMENTED,
  INTERNAL: status.INTERNAL,
  CANCELLED: status.CANCELLED,
  DEADLINE_EXCEEDED: status.DEADLINE_EXCEEDED,
  ALREADY_EXISTS: status.ALREADY_EXISTS,
  RESOURCE_EXHAUSTED: status.RESOURCE_EXHAUSTED,
};

/** The gRPC status a call ends with for anything thrown while serving it; the message is the error's own. */
export function grpcError(error: unknown): Partial<StatusObject> {
  const failure = InferenceError.from(error);
  return { code: STATUS_OF[failure.code], details: failure.message };
}
