import type { IncomingMessage, ServerResponse } from 'node:http';
import { isObservingRequests, type CallerTrace } from '@tritium/core';
import { frontendTrace, sendTraced } from '../request-tracing.js';
import { sendError } from './responses.js';

/**
 * The CallerTrace of an HTTP inference from the request's `traceparent`/`tracestate`
 * headers, while someone listens (isObservingRequests), with HTTP_RECV_START stamped now.
 */
function httpTrace(req: IncomingMessage): CallerTrace | undefined {
  if (!isObservingRequests()) return undefined;
  const trace = frontendTrace(oneHeader(req.headers.traceparent), oneHeader(req.headers.tracestate));
  trace.stamp('HTTP_RECV_START');
  return trace;
}

/**
 * Runs an inference route's `answer` under the request's trace (httpTrace). While traced,
 * an error is answered here, between send activities of its own; untraced, it is thrown
 * to the router, which answers it as any other. The trace ends once the response is
 * written or failed (its client gone, too: the answer then fails or ends early).
 */
export async function answerTraced(req: IncomingMessage, res: ServerResponse, answer: (trace: CallerTrace | undefined) => Promise<void>): Promise<void> {
  const trace = httpTrace(req);
  try {
    await answer(trace);
  } catch (error) {
    if (!trace) throw error;
    // A client gone gets no answer, and its trace no send activities.
    if (!res.destroyed) sendTraced(trace, 'HTTP', () => sendError(res, error));
  } finally {
    trace?.end();
  }
}

function oneHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
