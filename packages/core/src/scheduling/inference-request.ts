import { performance } from 'node:perf_hooks';
import type { BatchBuffers } from '../backend/batch-buffers.js';
import type { BackendRequest } from '../contract/backend.js';
import type { SequenceOptions } from '../contract/inference.js';
import { InferenceError } from '../errors.js';
import type { CallerTrace } from '../observability/caller-trace.js';
import type { ExecutionTimes } from './execution-times.js';
import type { RequestView } from '../observability/request-channels.js';
import type { ObservedRequest } from '../observability/request-publishing.js';
import type { RequestObserver } from '../observability/request-observers.js';
import type { Tensor } from '../tensor/tensor.js';
import { emitTritiumWarning } from '../warnings.js';
import { onAbort } from './abort-watch.js';
import type { ModelOutputs } from './model-outputs.js';
import { ResponseChannel, type ResponseOwner, type ResponseSink } from './response-channel.js';

export type RequestParameters = Readonly<Record<string, string | number | boolean>>;

/**
 * What the server's door hands to a scheduler: validated inputs and the caller's wishes.
 * `timeoutMicroseconds` follows Triton: the default scheduler ignores it; batchers
 * that honour it read it here.
 */
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
  readonly trace: CallerTrace | undefined;
}

/**
 * One accepted request on its way through a scheduler to a backend. It owns its
 * cancellation: the caller's AbortSignal fails it at once (a deadline is an
 * `AbortSignal.timeout()`), and a scheduler skips a request whose response has ended.
 */
export class InferenceRequest implements BackendRequest, ResponseOwner, ObservedRequest {
  readonly response: ResponseChannel;
  /** performance.now() at arrival, for queue-time statistics. */
  readonly arrivalTime = performance.now();
  /** performance.now() when a backend started and finished executing it; set by the instance runner. */
  executeStart = 0;
  executeEnd = 0;
  /** Set by the instance runner when the backend reported the execution's compute times. */
  executionTimes: ExecutionTimes | undefined = undefined;
  /** Set by the instance runner while the request executes: the memory its batch's inputs are gathered into. */
  batchBuffers: BatchBuffers | undefined = undefined;
  /** Set when a scheduler refused the request (a full queue, a queue timeout, a sequence it cannot take): Triton's REJECTED. */
  rejected = false;
  /** Set by a batching scheduler: requests with different keys never share a batch. */
  batchKey: string | undefined = undefined;
  /**
   * Set by a scheduler while the request waits in its queue: takes it out when it ends there
   * (cancelled, timed out). One function per scheduler where it can: a closure per request
   * holding the request kept requests alive through young-generation collections, and
   * V8 then allocated them straight into the old generation (a third of a batching run's time in GC).
   */
  withdraw: ((request: InferenceRequest) => void) | undefined = undefined;
  /** A batcher's record of the request while it waits in the batcher's queue (@tritium/batcher's QueuedItem). */
  queueSlot: unknown = undefined;
  /** Its place among its model version's requests in flight (LiveSet). */
  liveIndex = -1;
  /** What the request channels and observers report it as; made only when someone observes requests. */
  channelView: RequestView | undefined = undefined;
  /** The core observers (tracers) that follow the request, chosen at its start. */
  observers: RequestObserver[] | undefined = undefined;
  private cancelled = false;
  private cancelListeners: Set<() => void> | undefined = undefined;
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
    const signal = request.signal;
    if (signal) {
      if (signal.aborted) throw this.abortError(signal);
      this.stopWatchingSignal = onAbort(signal, () => this.cancel(this.abortError(signal)));
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

  get timeoutMicroseconds(): number {
    return this.request.timeoutMicroseconds;
  }

  get sequence(): SequenceOptions | undefined {
    return this.request.sequence;
  }

  get trace(): CallerTrace | undefined {
    return this.request.trace;
  }

  get isCancelled(): boolean {
    return this.cancelled;
  }

  /** The request the channels report an execution of this for: itself (a sequence step's is its caller's). */
  get observed(): ObservedRequest {
    return this;
  }

  onCancel(listener: () => void): () => void {
    if (this.cancelled) {
      listener();
      return () => {};
    }
    (this.cancelListeners ??= new Set()).add(listener);
    return () => this.cancelListeners?.delete(listener);
  }

  /** A scheduler's refusal: fails the request as cancel() does, counted as rejected. */
  reject(error: InferenceError): void {
    this.rejected = true;
    this.cancel(error);
  }

  /** Fails the request now; a backend still running it sees `isCancelled` and its late responses are dropped. */
  cancel(error: InferenceError): void {
    if (!this.cancelled) {
      this.cancelled = true;
      const listeners = this.cancelListeners;
      this.cancelListeners = undefined;
      // A throwing listener is the backend's bug; the others must still hear.
      for (const listener of listeners ?? []) {
        try {
          listener();
        } catch (failure) {
          emitTritiumWarning('TRITIUM_W008', `a cancellation listener of ${this.describe()} threw: ${String(failure)}`);
        }
      }
    }
    this.response.fail(error);
  }

  describe(): string {
    return `model '${this.modelName}' version ${this.modelVersion} request '${this.id}'`;
  }

  /** Called once by the response channel when the last response or an error went out. */
  responseEnded(error?: InferenceError): void {
    this.stopWatchingSignal?.();
    // Ended without a cancellation: nothing will cancel it any more.
    if (!this.cancelled) this.cancelListeners = undefined;
    this.withdraw?.(this);
    this.onEnd(this, error);
  }

  /** Node's convention: a signal that aborts with a TimeoutError (AbortSignal.timeout) is a deadline. */
  private abortError(signal: AbortSignal): InferenceError {
    const reason: unknown = signal.reason;
    if (reason instanceof DOMException && reason.name === 'TimeoutError') {
      return new InferenceError('DEADLINE_EXCEEDED', `${this.describe()}: the caller's deadline passed (its AbortSignal timed out)`);
    }
    return new InferenceError('CANCELLED', `${this.describe()}: cancelled by the caller`);
  }
}
