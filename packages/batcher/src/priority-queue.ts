import { DeadlineHeap } from './deadline-heap.js';
import { queueTimeout, type QueuePolicy } from './queue-policy.js';
import { QueueSlot } from './queue-slot.js';
import { SlotList } from './slot-list.js';

/** What the queue reads of an item. */
export interface QueuedItem {
  /** as the caller asked; 0 or above the number of levels means the default level */
  readonly priority: number;
  /** the caller's queue timeout (µs), 0 = none */
  readonly timeoutMicroseconds: number;
  /**
   * The queue's record of the item while it is queued: written by the queue alone. Kept
   * on the item, not in a WeakMap by item: a WeakMap's set and delete per item, and the
   * collector's pass over its entries, cost a tenth of a dynamically batched request.
   */
  queueSlot?: unknown;
}

export type EnqueueResult = { readonly queued: true } | { readonly queued: false; readonly reason: string };

export interface PriorityQueueOptions {
  /** 0 = priorities off (one level) */
  readonly priorityLevels: number;
  readonly defaultPriorityLevel: number;
  readonly defaultQueuePolicy: QueuePolicy;
  readonly priorityQueuePolicy?: ReadonlyMap<number, QueuePolicy>;
}

const QUEUED: EnqueueResult = Object.freeze({ queued: true });

/** One priority level: its policy, its items in arrival order, then those whose DELAY timeout expired. */
class Level<T> {
  constructor(
    readonly policy: QueuePolicy,
    readonly waiting: SlotList<T>,
    readonly delayed: SlotList<T>,
    /** built once, so refusing under load builds nothing */
    readonly refusal: EnqueueResult,
  ) {}

  get size(): number {
    return this.waiting.size + this.delayed.size;
  }
}

/**
 * Triton's priority queue: one FIFO per priority level (level 1 served first), each
 * with its own queue policy (size bound, timeout, REJECT or DELAY on expiry). Within
 * a level, items whose DELAY timeout expired come after the level's other items and
 * before any lower level's.
 *
 * Unlike Triton, which applies timeouts only when its batcher scans the queue,
 * expiries here are applied by time: whenever the queue is used, every item whose
 * deadline is at or before `now` has been moved (DELAY) or taken out (REJECT, held for
 * `takeExpired()`), so expired items never hold a place or join a batch.
 */
export class PriorityQueue<T extends QueuedItem> {
  private readonly levels: Level<T>[] = [];
  /** every level's waiting and delayed lists, in service order */
  private readonly lists: SlotList<T>[] = [];
  /** items queued */
  private count = 0;
  private readonly deadlines = new DeadlineHeap<T>();
  /** REJECT expiries not yet taken, in deadline order */
  private expired: QueueSlot<T>[] = [];
  private readonly defaultLevelIndex: number;
  private arrivals = 0;

  constructor(private readonly options: PriorityQueueOptions) {
    const levelCount = Math.max(1, options.priorityLevels);
    for (let level = 1; level <= levelCount; level++) {
      const policy = (options.priorityLevels > 0 ? options.priorityQueuePolicy?.get(level) : undefined) ?? options.defaultQueuePolicy;
      const reason =
        options.priorityLevels > 0 ? `Exceeds maximum queue size of priority level ${level}` : 'Exceeds maximum queue size';
      const waiting = new SlotList<T>(this.lists.length);
      const delayed = new SlotList<T>(this.lists.length + 1);
      this.lists.push(waiting, delayed);
      this.levels.push(new Level(policy, waiting, delayed, Object.freeze({ queued: false, reason })));
    }
    this.defaultLevelIndex = options.priorityLevels > 0 ? options.defaultPriorityLevel - 1 : 0;
  }

  /** items queued (not removed, taken or expired) */
  get size(): number {
    return this.count;
  }

  enqueue(item: T, now: number): EnqueueResult {
    this.expire(now);
    const level = this.level(this.levelIndex(item.priority));
    const { maxQueueSize } = level.policy;
    // Triton refuses the newcomer; nothing already queued is dropped.
    if (maxQueueSize > 0 && level.size >= maxQueueSize) return level.refusal;
    const timeout = queueTimeout(level.policy, item.timeoutMicroseconds);
    const slot = new QueueSlot(item, this.arrivals++, now, timeout > 0 ? now + timeout : Infinity);
    level.waiting.push(slot);
    item.queueSlot = slot;
    this.count++;
    if (timeout > 0) this.deadlines.push(slot);
    return QUEUED;
  }

  /** Takes a queued item out (its caller cancelled it); false when it was not queued. */
  remove(item: T): boolean {
    const slot = item.queueSlot as QueueSlot<T> | undefined;
    if (!slot) return false;
    this.detach(slot);
    return true;
  }

  /** The first item in service order: highest level first, FIFO within it, delayed items last. */
  first(): QueueSlot<T> | undefined {
    return this.firstFrom(0);
  }

  /** The item served after `slot`, which must still be queued. */
  after(slot: QueueSlot<T>): QueueSlot<T> | undefined {
    return slot.next ?? this.firstFrom(slot.list!.rank + 1);
  }

  /** Takes the first item out. The queue must not be empty. */
  shift(): T {
    const slot = this.first()!;
    this.detach(slot);
    return slot.item;
  }

  /** Applies every timeout due at `now`: DELAY items move behind their level, REJECT items leave. */
  expire(now: number): void {
    for (let slot = this.deadlines.peek(); slot && slot.deadline <= now; slot = this.deadlines.peek()) {
      const level = this.levelOf(slot);
      if (level.policy.timeoutAction === 'DELAY') {
        this.deadlines.remove(slot);
        level.waiting.remove(slot);
        level.delayed.push(slot);
      } else {
        this.detach(slot);
        this.expired.push(slot);
      }
    }
  }

  /** The items whose REJECT timeout expired since the last call, earliest deadline first. */
  takeExpired(): T[] {
    const taken = this.expired.map((slot) => slot.item);
    this.expired = [];
    return taken;
  }

  /** The earliest deadline still to act on (an untaken REJECT expiry, or a pending timeout); undefined for none. */
  nextDeadline(): number | undefined {
    return (this.expired[0] ?? this.deadlines.peek())?.deadline;
  }

  private levelIndex(priority: number): number {
    return priority >= 1 && priority <= this.options.priorityLevels ? priority - 1 : this.defaultLevelIndex;
  }

  private level(index: number): Level<T> {
    const level = this.levels[index];
    if (level === undefined) throw new RangeError(`priority level ${index + 1} is not in [1, ${this.levels.length}]`);
    return level;
  }

  /** Each level owns two lists: ranks 2i (waiting) and 2i + 1 (delayed). */
  private levelOf(slot: QueueSlot<T>): Level<T> {
    return this.level(slot.list!.rank >> 1);
  }

  private firstFrom(rank: number): QueueSlot<T> | undefined {
    for (; rank < this.lists.length; rank++) {
      const head = this.lists[rank]?.head;
      if (head) return head;
    }
    return undefined;
  }

  private detach(slot: QueueSlot<T>): void {
    slot.list!.remove(slot);
    if (slot.heapIndex >= 0) this.deadlines.remove(slot);
    slot.item.queueSlot = undefined;
    this.count--;
  }
}
