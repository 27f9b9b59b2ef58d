import { CallerTrace } from '@tritium/core';

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
