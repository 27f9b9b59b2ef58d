import { performance } from 'node:perf_hooks';
import type { BackendInstance, BackendRequest, ExecuteResult, ResponseSender } from '../contract/backend.js';
import { ExecutionTimes } from './execution-times.js';
import { BatchBuffers, type LendingRequest } from '../backend/batch-buffers.js';
import { InferenceError } from '../errors.js';
import {
  requestComputeEndChannel,
  requestComputeInputEndChannel,
  requestComputeOutputStartChannel,
  requestComputeStartChannel,
  type ExecutionView,
} from '../observability/request-channels.js';
import { isComputeHeard, publishCompute, type ExecutedRequest } from '../observability/request-publishing.js';
import type { ModelStatisticsRecorder } from '../observability/statistics.js';
import type { Tensor } from '../tensor/tensor.js';

/**
 * What a runner executes: a backend request the runner can time and name, whose sender
 * tells whether a response reached its caller. An InferenceRequest is one; a sequence
 * step (an InferenceRequest with its control and state inputs) is another.
 */
export interface ScheduledRequest extends BackendRequest, LendingRequest, ExecutedRequest {
  executeStart: number;
  executeEnd: number;
  /** What the backend reported of the request's execution, when it reported anything. */
  executionTimes: ExecutionTimes | undefined;
  describe(): string;
  readonly response: DeliveringSender;
}

/** A response sender that says whether a response reached its caller (false: it failed the request or came too late). */
export interface DeliveringSender extends ResponseSender {
  send(outputs: Readonly<Record<string, Tensor>>, options?: { final?: boolean }): boolean;
}

const FINAL = Object.freeze({ final: true });
const SETTLED = Promise.resolve();

function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return typeof (value as { then?: unknown } | undefined)?.then === 'function';
}

/**
 * Runs batches on one backend instance and delivers what comes back: one final
 * response per request for ordinary models; decoupled models answer through each
 * request's sender themselves. Every scheduler executes through this.
 */
export class InstanceRunner {
  /**
   * Memory for gathered inputs, lent to each execution until execute returns. Not for a
   * decoupled model: it may go on using its inputs after execute returned.
   */
  private readonly buffers: BatchBuffers | undefined;

  constructor(
    readonly instance: BackendInstance,
    private readonly decoupled: boolean,
    private readonly statistics: ModelStatisticsRecorder,
  ) {
    this.buffers = decoupled ? undefined : new BatchBuffers();
  }

  private busy = false;
  private idleWaiters: Array<() => void> = [];
  /** The scheduler's `then` of a run that ended within its call, until the microtask that calls it. */
  private after: ((runner: InstanceRunner) => void) | undefined = undefined;
  private readonly callAfter = (): void => {
    const after = this.after!;
    this.after = undefined;
    after(this);
  };

  /** Resolves when no execution is running on this instance. */
  idle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Executes a batch, then calls `then` with this runner (a scheduler's one function for
   * every run, so that a run makes no closure or promise of its own for it); failures go
   * to the requests. A backend that answers within the call is delivered at once, and
   * `then` hears in a microtask: called back within a scheduler's dispatch, it would
   * start the next run inside this one, as deep as the queue is long.
   */
  run(requests: readonly ScheduledRequest[], then: (runner: InstanceRunner) => void): void {
    const times = this.begin(requests);
    const execution = isComputeHeard(requestComputeStartChannel) ? publishCompute(requestComputeStartChannel, requests, times.start) : undefined;
    let results: ExecuteResult | void | Promise<ExecuteResult | void>;
    try {
      results = this.instance.execute(requests, times);
    } catch (error) {
      this.failed(requests, execution, error);
      this.thenLater(then);
      return;
    }
    if (isPromise(results)) {
      void this.settle(results, requests, times, execution, then);
      return;
    }
    this.executed(requests, times, execution, results);
    this.thenLater(then);
  }

  /**
   * The rest of a run whose backend answers with a promise. Kept small: what an async
   * function holds across its await is saved with it, so the work before and after is
   * done by plain methods.
   */
  private async settle(
    pending: Promise<ExecuteResult | void>,
    requests: readonly ScheduledRequest[],
    times: ExecutionTimes,
    execution: ExecutionView | undefined,
    then: (runner: InstanceRunner) => void,
  ): Promise<void> {
    let results: ExecuteResult | void;
    try {
      results = await pending;
    } catch (error) {
      this.failed(requests, execution, error);
      then(this);
      return;
    }
    this.executed(requests, times, execution, results);
    then(this);
  }

  /**
   * Calls `then` in a microtask (one run at a time: the runner keeps it meanwhile, with no
   * closure made). Through a settled promise: Node's queueMicrotask makes an async
   * resource and a bound function per call.
   */
  private thenLater(then: (runner: InstanceRunner) => void): void {
    this.after = then;
    void SETTLED.then(this.callAfter);
  }

  /** The requests execute from now, with the runner's buffers lent to them; the execution's times start. */
  private begin(requests: readonly ScheduledRequest[]): ExecutionTimes {
    this.busy = true;
    const start = performance.now();
    const buffers = this.buffers;
    for (const request of requests) {
      request.executeStart = start;
      request.batchBuffers = buffers;
    }
    return new ExecutionTimes(start);
  }

  /** The backend returned: its results are delivered, and the execution counts in the statistics when a request in it succeeded, as Triton's backends count. */
  private executed(requests: readonly ScheduledRequest[], times: ExecutionTimes, execution: ExecutionView | undefined, results: ExecuteResult | void): void {
    const end = performance.now();
    let succeeded = false;
    try {
      if (times.reported) this.noteTimes(requests, times, end, execution);
      if (isComputeHeard(requestComputeEndChannel)) publishCompute(requestComputeEndChannel, requests, end, execution, results);
      if (results) {
        for (const request of requests) request.executeEnd = end;
        succeeded = this.deliver(requests, results);
      } else if (this.decoupled) {
        succeeded = true;
      } else {
        this.failAll(requests, 'backend returned no responses');
      }
    } catch (error) {
      this.failEach(requests, error);
    } finally {
      this.end(requests, results);
    }
    if (succeeded) {
      let batchSize = 0;
      for (const request of requests) batchSize += request.batchSize;
      this.statistics.recordExecution(batchSize, times.start, end, times.reported ? times : undefined);
    }
  }

  /** The backend threw (or its promise rejected): every request fails with its error. */
  private failed(requests: readonly ScheduledRequest[], execution: ExecutionView | undefined, error: unknown): void {
    if (isComputeHeard(requestComputeEndChannel)) publishCompute(requestComputeEndChannel, requests, performance.now(), execution);
    this.failEach(requests, error);
    this.end(requests, undefined);
  }

  /** The execution is over: the buffers it borrowed are free again, and whoever waits for the instance to be idle hears. */
  private end(requests: readonly ScheduledRequest[], results: ExecuteResult | void): void {
    if (this.buffers) this.giveBack(requests, this.buffers, results);
    this.busy = false;
    if (this.idleWaiters.length > 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /** The backend reported compute times: each request keeps them for its statistics, and they are published. */
  private noteTimes(requests: readonly ScheduledRequest[], times: ExecutionTimes, end: number, execution: ExecutionView | undefined): void {
    for (const request of requests) request.executionTimes = times;
    const inputEnd = times.inputEnd(end);
    const outputStart = times.outputStart(end);
    if (inputEnd !== undefined && isComputeHeard(requestComputeInputEndChannel)) publishCompute(requestComputeInputEndChannel, requests, inputEnd, execution);
    if (outputStart !== undefined && isComputeHeard(requestComputeOutputStartChannel)) publishCompute(requestComputeOutputStartChannel, requests, outputStart, execution);
  }

  /** The execution returned: a later gather (none should come) allocates; what it borrowed is free again, but for memory its results share. */
  private giveBack(requests: readonly ScheduledRequest[], buffers: BatchBuffers, results: ExecuteResult | void): void {
    for (const request of requests) request.batchBuffers = undefined;
    buffers.release(Array.isArray(results) ? results : undefined);
  }

  /** Sends each request its result; true when at least one reached its caller. */
  private deliver(requests: readonly ScheduledRequest[], results: ExecuteResult): boolean {
    if (results.length !== requests.length) {
      this.failAll(requests, `backend returned ${results.length} responses for ${requests.length} requests`);
      return false;
    }
    let succeeded = false;
    for (let i = 0; i < requests.length; i++) {
      const result = results[i]!;
      const response = requests[i]!.response;
      if (result instanceof Error) {
        response.fail(result);
      } else if (response.send(result, FINAL)) {
        succeeded = true;
      }
    }
    return succeeded;
  }

  private failEach(requests: readonly ScheduledRequest[], error: unknown): void {
    for (const request of requests) request.response.fail(InferenceError.from(error, 'INTERNAL', request.describe()));
  }

  private failAll(requests: readonly ScheduledRequest[], reason: string): void {
    for (const request of requests) request.response.fail(new InferenceError('INTERNAL', `${request.describe()}: ${reason}`));
  }
}
