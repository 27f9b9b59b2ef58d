import type { BatchChoice } from './batch-choice.js';
import { systemClock, type Clock } from './clock.js';
import { chooseDirectBatch } from './direct-batch.js';
import { IdleSequences } from './idle-sequences.js';
import { chooseOldestBatch } from './oldest-batch.js';
import { Sequence, type SequenceItem } from './sequence.js';
import { SequenceSlots } from './sequence-slots.js';

export type { SequenceItem } from './sequence.js';

export interface SequenceBatcherOptions {
  readonly strategy: 'direct' | 'oldest';
  readonly instances: number;
  /** direct: max(1, max_batch_size); oldest: max_candidate_sequences */
  readonly slotsPerInstance: number;
  /** >= 1 */
  readonly maxBatchSize: number;
  /** oldest only */
  readonly preferredBatchSizes: readonly number[];
  readonly maxQueueDelayMicroseconds: number;
  /** direct only, in [0, 1] */
  readonly minimumSlotUtilization: number;
  /** taken as given: the adapter applies Triton's default (1 s) when the config says 0 */
  readonly maxSequenceIdleMicroseconds: number;
}

export type SequenceEnqueueResult =
  | { readonly accepted: true; readonly restarted: boolean }
  | { readonly accepted: false; readonly reason: 'not-started' | 'draining' };

/** A batch for one instance. direct: items[k] is slot k's item or null; oldest: no nulls. */
export interface SequenceBatch<T> {
  readonly instance: number;
  readonly items: readonly (T | null)[];
}

/**
 * What a free instance does next, decided from one clock reading: run `batch` now, or ask
 * again at `wakeAt` (µs, in the future: the queue delay it waits for; undefined: nothing
 * of its own to wait for, e.g. no ready item). Idle releases have their own time, releaseAt().
 */
export type SequenceBatchDecision<T> =
  | { readonly batch: SequenceBatch<T>; readonly wakeAt?: undefined }
  | { readonly batch?: undefined; readonly wakeAt: number | undefined };

/**
 * Triton's sequence batcher: each live sequence holds a slot on an instance (or waits in the
 * backlog for one), runs one item at a time, and gives its slot up when its END item completes
 * or when it has been idle too long. Pure: time comes from `clock`, the adapter runs batches.
 */
export class SequenceBatcher<T extends SequenceItem> {
  /** One sequence per key: a START after an END queues behind it rather than running beside it. */
  private readonly sequences = new Map<string, Sequence<T>>();
  /** The sequence of each queued or running item: a WeakMap, since a set and a delete per item on a long-lived Map get every item promoted (see priority-queue.ts). */
  private readonly owners = new WeakMap<T, Sequence<T>>();
  private readonly slots: SequenceSlots<Sequence<T>>;
  /** Sequences waiting for a slot; a Set keeps arrival order and deletes in O(1). */
  private readonly backlog = new Set<Sequence<T>>();
  private readonly idle: IdleSequences<Sequence<T>>;
  private released: string[] = [];
  private queuedCount = 0;
  private draining = false;

  constructor(
    private readonly options: SequenceBatcherOptions,
    private readonly clock: Clock = systemClock,
  ) {
    const { instances, slotsPerInstance, maxBatchSize, minimumSlotUtilization } = options;
    if (!(instances >= 1 && slotsPerInstance >= 1 && maxBatchSize >= 1)) {
      throw new RangeError('instances, slotsPerInstance and maxBatchSize must be at least 1');
    }
    if (!(minimumSlotUtilization >= 0 && minimumSlotUtilization <= 1)) {
      throw new RangeError('minimumSlotUtilization must be in [0, 1]');
    }
    this.slots = new SequenceSlots(instances, slotsPerInstance);
    this.idle = new IdleSequences(options.maxSequenceIdleMicroseconds);
  }

  enqueue(item: T): SequenceEnqueueResult {
    this.releaseIdle();
    let sequence = this.sequences.get(item.sequenceKey);
    if (item.start) {
      if (this.draining) return { accepted: false, reason: 'draining' };
      // A START while the sequence is still open ends it early (Triton warns and goes on).
      const restarted = sequence?.open ?? false;
      if (!sequence) {
        sequence = new Sequence<T>(item.sequenceKey);
        this.sequences.set(item.sequenceKey, sequence);
        this.seat(sequence);
      }
      this.push(sequence, item);
      return { accepted: true, restarted };
    }
    if (!sequence?.open) return { accepted: false, reason: 'not-started' };
    this.push(sequence, item);
    return { accepted: true, restarted: false };
  }

  /**
   * A free instance's next batch, or when to ask again. The decision is not remembered: an
   * instance that leaves service while it waits leaves nothing behind to wake for.
   */
  nextBatch(instance: number): SequenceBatchDecision<T> {
    const now = this.clock.now();
    this.releaseIdle(now);
    const choice = this.choose(instance, now);
    if (!choice) return { wakeAt: undefined };
    if ('waitUntil' in choice) return { wakeAt: choice.waitUntil };
    const items = choice.take.map((sequence) => (sequence ? this.dispatch(sequence) : null));
    return { batch: { instance, items } };
  }

  completed(batch: SequenceBatch<T>): void {
    const now = this.clock.now();
    for (const item of batch.items) {
      if (item === null) continue;
      const sequence = this.owners.get(item);
      if (!sequence?.isRunning(item)) throw new Error(`completed: item of sequence '${item.sequenceKey}' is not running`);
      this.owners.delete(item);
      sequence.complete(now);
      if (item.end) this.endStep(sequence);
      else if (sequence.idle) this.idle.markIdle(sequence, now);
    }
  }

  remove(item: T): boolean {
    const sequence = this.owners.get(item);
    if (!sequence?.remove(item)) return false;
    this.owners.delete(item);
    this.queuedCount--;
    // The caller's cancel counts as activity: the idle clock starts now.
    if (sequence.idle) this.idle.markIdle(sequence, this.clock.now());
    return true;
  }

  /** Takes every queued item out (nothing will run them: the model stops or cannot run); running items still complete. */
  clear(): T[] {
    const taken: T[] = [];
    const now = this.clock.now();
    for (const sequence of this.sequences.values()) {
      for (const item of sequence.takeQueued()) {
        this.owners.delete(item);
        taken.push(item);
      }
      if (sequence.idle) this.idle.markIdle(sequence, now);
    }
    this.queuedCount = 0;
    return taken;
  }

  takeReleased(): string[] {
    this.releaseIdle();
    const released = this.released;
    this.released = [];
    return released;
  }

  /**
   * When takeReleased may give something new: the next idle deadline, or now while released
   * keys wait to be taken. At that time call takeReleased, and nextBatch for each free
   * instance (a released slot may have seated a backlogged sequence).
   */
  releaseAt(): number | undefined {
    if (this.released.length > 0) return this.clock.now();
    return this.idle.nextDeadline();
  }

  /** The server is stopping: no new sequences, live ones finish, nothing waits for a delay (ask nextBatch again). */
  drain(): void {
    this.draining = true;
  }

  /** Whether the sequence has started and has not ended or been released. */
  isLive(sequenceKey: string): boolean {
    this.releaseIdle();
    return this.sequences.has(sequenceKey);
  }

  get liveSequences(): number {
    this.releaseIdle();
    return this.sequences.size;
  }

  /** queued items (excluding in flight) */
  get size(): number {
    return this.queuedCount;
  }

  private choose(instance: number, now: number): BatchChoice<Sequence<T>> {
    const slots = this.slots.of(instance);
    return this.options.strategy === 'direct'
      ? chooseDirectBatch(slots, this.options, now, !this.draining)
      : chooseOldestBatch(slots, this.options, now, !this.draining);
  }

  private push(sequence: Sequence<T>, item: T): void {
    sequence.push(item, this.clock.now());
    this.owners.set(item, sequence);
    this.idle.markBusy(sequence);
    this.queuedCount++;
  }

  private dispatch(sequence: Sequence<T>): T {
    this.queuedCount--;
    return sequence.dispatch();
  }

  private seat(sequence: Sequence<T>): void {
    sequence.place = this.slots.seat(sequence);
    if (!sequence.place) this.backlog.add(sequence);
  }

  /** An END item completed. */
  private endStep(sequence: Sequence<T>): void {
    if (sequence.idle) {
      this.sequences.delete(sequence.key);
      this.vacate(sequence);
      return;
    }
    // A new START already queued behind the END: Triton seats it as a new sequence, behind
    // any backlog, so the slot goes to the backlog first.
    if (sequence.place && this.backlog.size > 0) {
      this.vacate(sequence);
      this.backlog.add(sequence);
    }
  }

  private releaseIdle(now = this.clock.now()): void {
    for (const sequence of this.idle.takeExpired(now)) {
      this.sequences.delete(sequence.key);
      this.released.push(sequence.key);
      this.vacate(sequence);
    }
  }

  /** Takes a sequence out of its slot (which goes to the oldest backlogged sequence) or the backlog. */
  private vacate(sequence: Sequence<T>): void {
    const place = sequence.place;
    sequence.place = undefined;
    if (!place) {
      this.backlog.delete(sequence);
      return;
    }
    const next = this.takeOldestBacklogged();
    if (next) {
      next.place = place;
      this.slots.assign(place, next);
    } else {
      this.slots.release(place);
    }
  }

  private takeOldestBacklogged(): Sequence<T> | undefined {
    for (const sequence of this.backlog) {
      this.backlog.delete(sequence);
      return sequence;
    }
    return undefined;
  }
}
