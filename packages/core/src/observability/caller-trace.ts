import { performance } from 'node:perf_hooks';
import { InferenceError } from '../errors.js';

/** One activity of the caller, e.g. Triton's HTTP_RECV_START, at a `performance.now()` time. */
export interface CallerActivity {
  readonly name: string;
  readonly time: number;
}

export interface CallerTraceOptions {
  /** The W3C `traceparent` the request's trace continues (OpenTelemetry mode): from an HTTP header or gRPC metadata. */
  readonly traceparent?: string;
  /** The W3C `tracestate` that came with it. */
  readonly tracestate?: string;
  /**
   * The caller stamps activities after the response (a frontend's send times), and calls
   * end() when it has: tracers wait for that before writing the request's trace.
   */
  readonly endsAfterResponse?: boolean;
}

const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * What the caller of a request adds to its trace (InferRequest.trace): the trace context
 * it continues and its own activities. Frontends make one per request while someone
 * listens to the request channels, as Triton's frontends start a request's trace before
 * core sees it and stamp their receive and send times on it.
 */
export class CallerTrace {
  readonly traceparent: string | undefined;
  readonly tracestate: string | undefined;
  private readonly stamped: CallerActivity[] = [];
  private ended: boolean;
  private endListeners: (() => void)[] = [];

  constructor(options: CallerTraceOptions = {}) {
    const { traceparent, tracestate } = options;
    // W3C Trace Context: a malformed traceparent is ignored (a new trace starts), never an error.
    this.traceparent = typeof traceparent === 'string' && TRACEPARENT.test(traceparent.trim()) ? traceparent.trim() : undefined;
    this.tracestate = this.traceparent && typeof tracestate === 'string' ? tracestate : undefined;
    this.ended = options.endsAfterResponse !== true;
  }

  get activities(): readonly CallerActivity[] {
    return this.stamped;
  }

  stamp(name: string, time = performance.now()): void {
    // Checked here: a bad stamp would otherwise surface later as a broken trace file.
    if (typeof name !== 'string' || name === '') throw new InferenceError('INVALID_ARG', `CallerTrace.stamp: the activity name must be a non-empty string, got ${JSON.stringify(name)}`);
    if (typeof time !== 'number' || !Number.isFinite(time)) {
      throw new InferenceError('INVALID_ARG', `CallerTrace.stamp('${name}'): the time must be a performance.now() number of milliseconds, got ${String(time)}`);
    }
    this.stamped.push({ name, time });
  }

  /** The caller is done (its last response is sent or failed): tracers waiting on it write the trace. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    const listeners = this.endListeners;
    this.endListeners = [];
    for (const listener of listeners) listener();
  }

  /** For tracers: calls `listener` once the caller has ended, at once if it has (or never stamps after the response). */
  whenEnded(listener: () => void): void {
    if (this.ended) listener();
    else this.endListeners.push(listener);
  }
}

/** InferRequest.trace as given: a CallerTrace (of any copy of core, ESM or CJS, so by its shape) or nothing. */
export function checkCallerTrace(trace: unknown): CallerTrace | undefined {
  if (trace === undefined) return undefined;
  if (typeof trace === 'object' && trace !== null && typeof (trace as CallerTrace).whenEnded === 'function' && Array.isArray((trace as CallerTrace).activities)) return trace as CallerTrace;
  throw new InferenceError('INVALID_ARG', '`trace` must be a CallerTrace (new CallerTrace({ traceparent }))');
}
