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
 * The most UTF-8 bytes of a status message sent. It travels in a trailer, which clients
 * bound (gRPC's default is 8 KiB of metadata), percent-encoded (each byte other than
 * ASCII takes three characters): a message that echoes a long name or shape is cut to
 * fit, 6 KiB at most on the wire.
 */
export const MAX_STATUS_MESSAGE_BYTES = 2048;

/** The gRPC status a call ends with for anything thrown while serving it; the message is the error's own, cut to MAX_STATUS_MESSAGE_BYTES. */
export function grpcError(error: unknown): Partial<StatusObject> {
  const { code, message } = InferenceError.from(error);
  return { code: STATUS_OF[code], details: statusMessage(message) };
}

const ELLIPSIS = '…';

/**
 * `message` as a trailer can carry it: well-formed (grpc-js percent-encodes it with
 * encodeURI, which throws on half a surrogate pair, and the throw escapes the call) and
 * cut at a whole character to MAX_STATUS_MESSAGE_BYTES, an ellipsis marking the cut.
 */
function isContinuationByte(byte: number | undefined): boolean {
  return byte !== undefined && (byte & 0xc0) === 0x80;
}

function statusMessage(message: string): string {
  // Decoding its own UTF-8 replaces any lone surrogate with U+FFFD.
  const utf8 = Buffer.from(message, 'utf8');
  if (utf8.length <= MAX_STATUS_MESSAGE_BYTES) return utf8.toString('utf8');
  let end = MAX_STATUS_MESSAGE_BYTES - Buffer.byteLength(ELLIPSIS);
  // Back to the start of a character: continuation bytes are 0b10xxxxxx.
  while (isContinuationByte(utf8[end])) end--;
  return utf8.toString('utf8', 0, end) + ELLIPSIS;
}
