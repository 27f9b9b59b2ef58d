import type { IncomingMessage, ServerResponse } from 'node:http';
import { isObservingRequests, type CallerTrace } from '@tritium/core';
import { frontendTrace, sendTraced } from '../request-tracing.js';
import { sendError } from './responses.js';

/**
 * The CallerTrace of an HTTP inference from the request's `traceparent`/`tracestate`
 * headers, while someone listens (isObservingRequests), with HTTP_RECV_START stamped now. It
 * ends when the response closes: written in full, cut off, or its client gone.
 */
export function httpTrace(req: IncomingMessage, res: ServerResponse): CallerTrace | undefined {
  if (!isObservingRequests()) return undefined;
  const trace = frontendTrace(oneHeader(req.headers.traceparent), oneHeader(req.headers.tracestate));
  trace.stamp('HTTP_RECV_START');
  res.once('close', () => trace.end());
  return trace;
}

/**
 * Runs an inference route's `answer` under the request's trace (httpTrace). While traced,
 * an error is answered here, between send activities of its own; untraced, it is thrown
 * to the router, which answers it as any other.
 */
export async function answerTraced(req: IncomingMessage, res: ServerResponse, answer: (trace: CallerTrace | undefined) => Promise<void>): Promise<void> {
  const trace = httpTrace(req, res);
  try {
    await answer(trace);
  } catch (error) {
    if (!trace) throw error;
    sendTraced(trace, 'HTTP', () => sendError(res, error));
  }
}

function oneHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
