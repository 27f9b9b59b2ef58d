import type { Metadata } from '@grpc/grpc-js';
import { isObservingRequests, type CallerTrace } from '@tritium/core';
import { frontendTrace } from '../request-tracing.js';
import type { InferRequestMessage } from './infer-request.js';

/**
 * The CallerTrace of one inference request read off a call, from the call's
 * `traceparent`/`tracestate` metadata, while someone listens (isObservingRequests).
 * grpc-js hands a message over whole: GRPC_WAITREAD_START is when its bytes were in and
 * decoding began, GRPC_WAITREAD_END when the handler took it (Triton's start also covers
 * the wait for the client to send).
 */
export function grpcTrace(metadata: Metadata, message: InferRequestMessage): CallerTrace | undefined {
  if (!isObservingRequests()) return undefined;
  const trace = frontendTrace(oneValue(metadata.get('traceparent')), oneValue(metadata.get('tracestate')));
  trace.stamp('GRPC_WAITREAD_START', message.readAt);
  trace.stamp('GRPC_WAITREAD_END');
  return trace;
}

function oneValue(values: readonly (string | Buffer)[]): string | undefined {
  const [value] = values;
  return typeof value === 'string' ? value : undefined;
}
