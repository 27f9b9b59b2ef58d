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

/**
 * The longest status message sent. It travels in a trailer, which clients bound (gRPC's
 * default is 8 KiB of metadata, and text other than ASCII travels percent-encoded, up to
 * three times longer): a message that echoes a long name or shape is cut to fit.
 */
export const MAX_STATUS_MESSAGE_LENGTH = 2048;

/** The gRPC status a call ends with for anything thrown while serving it; the message is the error's own, cut to MAX_STATUS_MESSAGE_LENGTH. */
export function grpcError(error: unknown): Partial<StatusObject> {
  const { code, message } = InferenceError.from(error);
  const details = message.length > MAX_STATUS_MESSAGE_LENGTH ? `${message.slice(0, MAX_STATUS_MESSAGE_LENGTH - 1)}…` : message;
  return { code: STATUS_OF[code], details };
}
