import { channel } from 'node:diagnostics_channel';
import { CallerTrace, REQUEST_CHANNELS } from '@tritium/core';

/** Where tracers and APMs listen: a frontend traces its requests only while someone does. */
const requestStart = channel(REQUEST_CHANNELS.start);

/**
 * Whether anyone listens to the request channels now (a trace setting that traces, an
 * APM): frontends make a trace for a request only then, so that with tracing off a
 * request costs this one check.
 */
export function tracingRequests(): boolean {
  return requestStart.hasSubscribers;
}

/**
 * A CallerTrace for one inference a frontend takes, continuing the client's W3C trace
 * context (`traceparent`, `tracestate`), on which the frontend stamps Triton's
 * activities (HTTP_RECV_START, …) and which it ends once the response is written or
 * failed.
 */
export function frontendTrace(traceparent: string | undefined, tracestate: string | undefined): CallerTrace {
  return new CallerTrace({ traceparent, tracestate, endsAfterResponse: true });
}

/** Writes a response between the protocol's send activities (Triton's HTTP_SEND_START/END, GRPC_SEND_START/END). */
export function sendTraced(trace: CallerTrace | undefined, protocol: 'HTTP' | 'GRPC', send: () => void): void {
  if (!trace) return send();
  trace.stamp(`${protocol}_SEND_START`);
  try {
    send();
  } finally {
    trace.stamp(`${protocol}_SEND_END`);
  }
}
