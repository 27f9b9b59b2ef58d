import { performance } from 'node:perf_hooks';
import type { BackendRequest } from '../backend/backend.js';
import { InferenceError } from '../errors.js';
import type { Tensor } from '../tensor/tensor.js';
import { onAbort } from './abort-watch.js';
import type { ModelOutputs } from './model-outputs.js';
import { ResponseChannel, type ResponseOwner, type ResponseSink } from './response-channel.js';

/** The longest delay setTimeout honours; past it, a timer fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export type RequestParameters = Readonly<Record<string, string | number | boolean>>;

export interface SequenceOptions {
  readonly id: number | string;
  readonly start?: boolean;
  readonly end?: boolean;
}

/** What the server's door hands to a scheduler: validated inputs and the caller's wishes. */
export interface ValidatedRequest {
  readonly id: string;
  readonly inputs: Record<string, Tensor>;
  readonly requestedOutputs: readonly string[];
  readonly batchSize: number;
  readonly parameters: RequestParameters;
  readonly priority: number;
  readonly timeoutMicroseconds: number;
  readonly signal: AbortSignal | undefined;
  readonly sequence: SequenceOptions | undefined;
}

/**
 * One accepted request on its way through a scheduler to a backend. It owns its
 * cancellation (AbortSignal) and deadline: either fails it at once, and a scheduler
 * skips a request whose response has already ended.
 */
export class InferenceRequest implements BackendRequest, ResponseOwner {
  readonly response: ResponseChannel;
  /** performance.now() at arrival, for queue-time statistics. */
  readonly arrivalTime = performance.now();
  /** performance.now() when a backend started and finished executing it; set by the instance runner. */
  executeStart = 0;
  executeEnd = 0;
  private cancelled = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly stopWatchingSignal: (() => void) | undefined;

  constructor(
    readonly modelName: string,
    readonly modelVersion: number,
    private readonly request: ValidatedRequest,
    sink: ResponseSink,
    private readonly onEnd: (request: InferenceRequest, error?: InferenceError) => void,
    modelOutputs: ModelOutputs,
  ) {
    this.response = new ResponseChannel(sink, request.requestedOutputs, this, modelOutputs);
    if (request.signal) {
      if (request.signal.aborted) throw this.cancellation();
      this.stopWatchingSignal = onAbort(request.signal, () => this.cancel(this.cancellation()));
    }
    // Past setTimeout's limit (about 24.8 days) a deadline is as good as none.
    if (request.timeoutMicroseconds > 0 && request.timeoutMicroseconds / 1000 <= MAX_TIMER_MS) {
      this.timer = setTimeout(
        () => this.cancel(new InferenceError('DEADLINE_EXCEEDED', `${this.describe()}: timed out after ${request.timeoutMicroseconds} µs`)),
        request.timeoutMicroseconds / 1000,
      );
    }
  }

  // What the door validated, as backends and schedulers read it.
  get id(): string {
    return this.request.id;
  }

  get inputs(): Record<string, Tensor> {
    return this.request.inputs;
  }

  get requestedOutputs(): readonly string[] {
    return this.request.requestedOutputs;
  }

  get batchSize(): number {
    return this.request.batchSize;
  }

  get parameters(): RequestParameters {
    return this.request.parameters;
  }

  get priority(): number {
    return this.request.priority;
  }

  get sequence(): SequenceOptions | undefined {
    return this.request.sequence;
  }

  get isCancelled(): boolean {
    return this.cancelled;
  }

  /** Fails the request now; a backend still running it sees `isCancelled` and its late responses are dropped. */
  cancel(error: InferenceError): void {
    this.cancelled = true;
    this.response.fail(error);
  }

  describe(): string {
    return `model '${this.modelName}' version ${this.modelVersion} request '${this.id}'`;
  }

  /** Called once by the response channel when the last response or an error went out. */
  responseEnded(error?: InferenceError): void {
    if (this.timer) clearTimeout(this.timer);
    this.stopWatchingSignal?.();
    this.onEnd(this, error);
  }

  private cancellation(): InferenceError {
    return new InferenceError('CANCELLED', `${this.describe()}: cancelled by the caller`);
  }
}
