import { systemClock, type Clock } from './clock.js';
import { preferredBatchCount, type BatchRun, type PreferredBatchRule } from './preferred-batch-rule.js';
import { PriorityQueue, type EnqueueResult, type QueuedItem } from './priority-queue.js';
import type { QueuePolicy } from './queue-policy.js';

export interface DynamicBatcherOptions {
  /** >= 1. (core passes 1 for a model with max_batch_size 0: one request per batch) */
  readonly maxBatchSize: number;
  /** empty = [maxBatchSize], as Triton's config normalisation does */
  readonly preferredBatchSizes: readonly number[];
  readonly maxQueueDelayMicroseconds: number;
  /** 0 = priorities off (one level) */
  readonly priorityLevels: number;
  readonly defaultPriorityLevel: number;
  readonly defaultQueuePolicy: QueuePolicy;
  readonly priorityQueuePolicy?: ReadonlyMap<number, QueuePolicy>;
}

/**
 * What a free instance does next, decided from one clock reading (two readings could
 * disagree: "wait" from one and "ready now" from the next would arm no timer):
 * - `batch`: run these items now;
 * - `wakeAt`: nothing to run yet; call nextBatch() again at that clock time (µs): the
 *   queue delay's expiry (always in the future) or the earliest queue timeout (already
 *   past when takeExpired() has items). Undefined when the queue is empty and nothing
 *   times out.
 */
export type BatchDecision<T> =
  | { readonly batch: T[]; readonly wakeAt?: undefined }
  | { readonly batch?: undefined; readonly wakeAt: number | undefined };

/** What the batcher reads of a queued item (core's request objects implement this). */
export interface BatchItem extends QueuedItem {
  /** rows this item contributes (>= 1) */
  readonly batchSize: number;
  /** items with different keys never share a batch; undefined = compatible with every item */
  readonly batchKey?: string | undefined;
}

/**
 * Triton's dynamic batcher, as a pure state machine: the caller enqueues items and,
 * whenever a model instance is free, asks nextBatch() for a batch or the time to ask again.
 *
 * A batch is the longest run of queued items, in service order (see PriorityQueue),
 * that fits `maxBatchSize` rows and shares one batch key. Of that run it sends:
 * - at once, the longest prefix whose rows are a preferred batch size (the largest
 *   reached), or, when the run grows past the largest preferred size without hitting
 *   one, the prefix just before it does;
 * - once the oldest item of the run has waited `maxQueueDelayMicroseconds` (or after
 *   `flush()`), the whole run;
 * - with no queue delay configured, or when the run cannot grow (cut short by the row
 *   limit or a different batch key, or already at the largest preferred size), the
 *   whole run at once.
 * Otherwise it waits for more items or for the delay to expire.
 */
export class DynamicBatcher<T extends BatchItem> {
  private readonly queue: PriorityQueue<T>;
  private readonly maxBatchSize: number;
  private readonly preferredSizes: ReadonlySet<number>;
  private readonly rule: PreferredBatchRule;
  private flushing = false;

  constructor(
    options: DynamicBatcherOptions,
    private readonly clock: Clock = systemClock,
  ) {
    checkOptions(options);
    this.queue = new PriorityQueue<T>(options);
    this.maxBatchSize = options.maxBatchSize;
    const preferred = options.preferredBatchSizes.length > 0 ? options.preferredBatchSizes : [options.maxBatchSize];
    this.preferredSizes = new Set(preferred);
    this.rule = { largestPreferredSize: Math.max(...preferred), maxQueueDelayMicroseconds: options.maxQueueDelayMicroseconds };
  }

  /** Queues `item`, or refuses it when its priority level's queue is full. */
  enqueue(item: T): EnqueueResult {
    return this.queue.enqueue(item, this.clock.now());
  }

  /** Takes out a queued item (cancelled by its caller); false when it was not queued. */
  remove(item: T): boolean {
    return this.queue.remove(item);
  }

  /** A free instance's next batch, taken out of the queue, or when to ask again. */
  nextBatch(): BatchDecision<T> {
    const now = this.clock.now();
    this.queue.expire(now);
    if (this.queue.size === 0) return { wakeAt: this.queue.nextDeadline() };
    const run = this.walkRun();
    const count = preferredBatchCount(run, this.rule, now, !this.flushing);
    if (count === 0) {
      // preferredBatchCount waits only while the delay has not passed at `now`: this is in the future.
      const delayExpiry = run.oldest + this.rule.maxQueueDelayMicroseconds;
      const timeout = this.queue.nextDeadline();
      return { wakeAt: timeout === undefined ? delayExpiry : Math.min(timeout, delayExpiry) };
    }
    const batch = new Array<T>(count);
    for (let i = 0; i < count; i++) batch[i] = this.queue.shift();
    return { batch };
  }

  /** Items whose REJECT queue timeout has expired, taken out of the queue, earliest deadline first. */
  takeExpired(): T[] {
    this.queue.expire(this.clock.now());
    return this.queue.takeExpired();
  }

  /** Takes every item out, expired ones included (nothing will run them: the model stops or cannot run). */
  clear(): T[] {
    const all = this.queue.takeExpired();
    while (this.queue.size > 0) all.push(this.queue.shift());
    return all;
  }

  /**
   * The earliest queue-timeout deadline (µs) still to act on (already past when
   * takeExpired() has items), without the queue delay: all an adapter needs to wake for
   * while no instance is free to take a batch.
   */
  nextTimeout(): number | undefined {
    this.queue.expire(this.clock.now());
    return this.queue.nextDeadline();
  }

  /** From now on, never wait for the queue delay (the model is unloading). */
  flush(): void {
    this.flushing = true;
  }

  /** Items queued now (excluding removed and expired ones). */
  get size(): number {
    this.queue.expire(this.clock.now());
    return this.queue.size;
  }

  /**
   * The run a batch is taken from: the front of the (non-empty) queue, as far as it fits one
   * batch. Follows the walk of Triton's GetDynamicBatch, forming the batch from scratch,
   * because here a batch is only formed when an instance is free to run it.
   */
  private walkRun(): BatchRun {
    let rows = 0;
    let count = 0;
    let preferredCount = 0;
    let cutShort = false;
    let batchKey: string | undefined;
    let oldest = Infinity;
    for (let slot = this.queue.first(); slot; slot = this.queue.after(slot)) {
      const item = slot.item;
      // As Triton: an item without a batch dimension still takes one row.
      const itemRows = Math.max(1, item.batchSize);
      if (count > 0) {
        // Growing past every preferred size: without a preferred hit, what came before is the best batch.
        if (preferredCount === 0 && rows + itemRows > this.rule.largestPreferredSize) preferredCount = count;
        if (rows + itemRows > this.maxBatchSize || !sameBatch(batchKey, item.batchKey)) {
          cutShort = true;
          break;
        }
      }
      rows += itemRows;
      count++;
      batchKey ??= item.batchKey;
      if (slot.enqueuedAt < oldest) oldest = slot.enqueuedAt;
      if (this.preferredSizes.has(rows)) preferredCount = count;
    }
    return { count, rows, preferredCount, cutShort, oldest };
  }
}

function sameBatch(batchKey: string | undefined, itemKey: string | undefined): boolean {
  return batchKey === undefined || itemKey === undefined || batchKey === itemKey;
}

function checkOptions(options: DynamicBatcherOptions): void {
  const { maxBatchSize, preferredBatchSizes, priorityLevels, defaultPriorityLevel } = options;
  if (!(maxBatchSize >= 1)) throw new RangeError(`maxBatchSize ${maxBatchSize} must be at least 1`);
  for (const size of preferredBatchSizes) {
    if (!(size >= 1 && size <= maxBatchSize)) {
      throw new RangeError(`preferred batch size ${size} must be in [1, maxBatchSize ${maxBatchSize}]`);
    }
  }
  if (priorityLevels > 0 && !(defaultPriorityLevel >= 1 && defaultPriorityLevel <= priorityLevels)) {
    throw new RangeError(`defaultPriorityLevel ${defaultPriorityLevel} must be in [1, priorityLevels ${priorityLevels}]`);
  }
}
