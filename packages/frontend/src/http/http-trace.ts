import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CallerTrace } from '@tritium/core';
import { frontendTrace, tracingRequests } from '../request-tracing.js';

/**
 * The CallerTrace of an HTTP inference from the request's `traceparent`/`tracestate`
 * headers, while someone listens (tracingRequests), with HTTP_RECV_START stamped now. It
 * ends when the response closes: written in full, cut off, or its client gone.
 */
export function httpTrace(req: IncomingMessage, res: ServerResponse): CallerTrace | undefined {
  if (!tracingRequests()) return undefined;
  const trace = frontendTrace(oneHeader(req.headers.traceparent), oneHeader(req.headers.tracestate));
  trace.stamp('HTTP_RECV_START');
  res.once('close', () => trace.end());
  return trace;
}

function oneHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
