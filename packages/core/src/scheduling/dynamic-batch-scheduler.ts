import { DynamicBatcher, type DynamicBatcherOptions, type QueuePolicy } from '@tritium/batcher';
import type { NormalizedModelConfig, NormalizedQueuePolicy } from '../config/schema.js';
import { InferenceError } from '../errors.js';
import { batchKeyFor } from './batch-key.js';
import type { InferenceRequest } from './inference-request.js';
import { noInstanceCanRun, type InstancePool } from './instance-pool.js';
import type { Scheduler } from './scheduler.js';
import { WakeTimer } from './wake-timer.js';

/**
 * Triton's dynamic batcher: the algorithm (preferred sizes, queue delay, priority
 * levels, queue policies) is @tritium/batcher's DynamicBatcher; this adapts it to
 * requests and to the model's instances. Whenever an instance is free it asks the
 * batcher for a batch, so N instances keep N batches in flight; a request that ends
 * while queued (cancelled, its deadline passed) leaves the queue at once.
 */
export class DynamicBatchScheduler implements Scheduler {
  private readonly batcher: DynamicBatcher<InferenceRequest>;
  private readonly timer = new WakeTimer(() => this.dispatch());
  private readonly batchKey: ((request: InferenceRequest) => string) | undefined;
  /** Whether a queue policy sets a timeout: if none does, nothing expires and the clock need not be read for it. */
  private readonly timesOut: boolean;
  /** Every queued request's withdraw (see InferenceRequest.withdraw). */
  private readonly withdraw = (request: InferenceRequest): void => {
    this.batcher.remove(request);
  };
  /** A dispatch queued as a microtask: requests that arrive together (callers answered by one batch, resubmitting) make one batch, not one each. */
  private dispatchQueued = false;
  /** A batch formed for an instance that waits for the rate limiter's grant. */
  private held: InferenceRequest[] | undefined = undefined;
  private readonly queuedDispatch = (): void => {
    this.dispatchQueued = false;
    this.dispatch();
  };

  constructor(
    config: NormalizedModelConfig,
    private readonly pool: InstancePool,
  ) {
    const options = dynamicBatcherOptions(config);
    this.batcher = new DynamicBatcher(options);
    this.timesOut = [options.defaultQueuePolicy, ...options.priorityQueuePolicy!.values()].some((policy) => policy.defaultTimeoutMicroseconds > 0);
    this.batchKey = batchKeyFor(config);
    pool.listen(() => this.queueDispatch());
  }

  enqueue(request: InferenceRequest): void {
    if (this.batchKey) request.batchKey = this.batchKey(request);
    const result = this.batcher.enqueue(request);
    if (!result.queued) {
      request.reject(new InferenceError('UNAVAILABLE', `${request.describe()}: ${result.reason}`));
      return;
    }
    request.withdraw = this.withdraw;
    this.queueDispatch();
  }

  drain(): Promise<void> {
    this.batcher.flush();
    this.dispatch();
    return Promise.resolve();
  }

  stop(error: InferenceError): void {
    this.timer.clear();
    this.failQueued(() => error);
  }

  private queueDispatch(): void {
    if (this.dispatchQueued) return;
    this.dispatchQueued = true;
    queueMicrotask(this.queuedDispatch);
  }

  private dispatch(): void {
    const failure = this.pool.failure;
    if (failure !== undefined) {
      this.failQueued((request) => noInstanceCanRun(request, failure));
      return;
    }
    if (this.timesOut) {
      for (const expired of this.batcher.takeExpired()) {
        expired.withdraw = undefined;
        expired.reject(new InferenceError('UNAVAILABLE', `${expired.describe()}: Request timeout expired`));
      }
    }
    while (this.pool.hasIdle) {
      const batch = this.liveHeld() ?? this.nextBatch();
      if (!batch) return;
      const runner = this.pool.acquire();
      if (!runner) {
        // The rate limiter has not granted an instance its resources yet: the batch waits, formed, as Triton's payload does.
        this.held = batch;
        break;
      }
      this.held = undefined;
      runner.run(batch, this.pool.release);
    }
    // The queue delay matters only to a free instance (a busy one dispatches again when it frees): under load, only timeouts wake.
    this.timer.set(this.timesOut ? this.batcher.nextTimeout() : undefined);
  }

  /** The held batch less the requests that ended while it waited for its grant (cancelled by their callers); undefined when none is left. */
  private liveHeld(): InferenceRequest[] | undefined {
    const live = this.held?.filter((request) => !request.response.isEnded);
    this.held = live !== undefined && live.length > 0 ? live : undefined;
    return this.held;
  }

  /** The batcher's next batch, out of the queue; undefined (the timer set for when one may be) when none is due. */
  private nextBatch(): InferenceRequest[] | undefined {
    const next = this.batcher.nextBatch();
    if (!next.batch) {
      this.timer.set(next.wakeAt);
      return undefined;
    }
    for (const request of next.batch) request.withdraw = undefined;
    return next.batch;
  }

  private failQueued(errorFor: (request: InferenceRequest) => InferenceError): void {
    for (const request of this.held ?? []) request.cancel(errorFor(request));
    this.held = undefined;
    for (const request of this.batcher.clear()) {
      request.withdraw = undefined;
      request.cancel(errorFor(request));
    }
  }
}

function dynamicBatcherOptions(config: NormalizedModelConfig): DynamicBatcherOptions {
  const batching = config.dynamic_batching!;
  return {
    // A model without a batch dimension still queues, prioritizes and times out; it runs one request at a time.
    maxBatchSize: Math.max(1, config.max_batch_size),
    preferredBatchSizes: batching.preferred_batch_size,
    maxQueueDelayMicroseconds: batching.max_queue_delay_microseconds,
    priorityLevels: batching.priority_levels,
    defaultPriorityLevel: batching.default_priority_level,
    defaultQueuePolicy: queuePolicy(batching.default_queue_policy),
    priorityQueuePolicy: new Map(Object.entries(batching.priority_queue_policy).map(([level, policy]) => [Number(level), queuePolicy(policy)])),
  };
}

function queuePolicy(policy: NormalizedQueuePolicy): QueuePolicy {
  return {
    timeoutAction: policy.timeout_action,
    defaultTimeoutMicroseconds: policy.default_timeout_microseconds,
    allowTimeoutOverride: policy.allow_timeout_override,
    maxQueueSize: policy.max_queue_size,
  };
}
