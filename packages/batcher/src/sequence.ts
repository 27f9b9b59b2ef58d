/** What the sequence batcher needs to know about an item; the adapter's items carry more. */
export interface SequenceItem {
  /** the correlation id, made a string key by the adapter */
  readonly sequenceKey: string;
  readonly start: boolean;
  readonly end: boolean;
}

interface QueuedItem<T> {
  readonly item: T;
  readonly enqueuedAt: number;
}

/** Where a sequence sits while it holds a slot. */
export interface SlotRef {
  readonly instance: number;
  readonly slot: number;
}

/**
 * One live sequence: its items in arrival order, of which at most one runs at a time so that
 * a stateful model sees the steps in order.
 */
export class Sequence<T extends SequenceItem> {
  private readonly queue: QueuedItem<T>[] = [];
  private running: T | undefined;
  /** The next item cannot become a candidate before the previous one completed. */
  private lastCompletedAt = -Infinity;
  /** undefined while backlogged */
  place: SlotRef | undefined;

  constructor(readonly key: string) {}

  get queued(): number {
    return this.queue.length;
  }

  /** Its head item may go into a batch now. */
  get ready(): boolean {
    return this.running === undefined && this.queue.length > 0;
  }

  /** Nothing queued and nothing running: the idle clock runs. */
  get idle(): boolean {
    return this.running === undefined && this.queue.length === 0;
  }

  /** False once its latest item is an END: only a START may follow. */
  get open(): boolean {
    const latest = this.queue.at(-1)?.item ?? this.running;
    return !latest?.end;
  }

  isRunning(item: T): boolean {
    return this.running === item;
  }

  /** When the head item was enqueued (direct: the queue delay counts from here). */
  get headEnqueuedAt(): number {
    return this.head().enqueuedAt;
  }

  /** When the head item became a candidate (oldest: its dynamic batcher sees it only then). */
  get headReadyAt(): number {
    return Math.max(this.head().enqueuedAt, this.lastCompletedAt);
  }

  push(item: T, now: number): void {
    this.queue.push({ item, enqueuedAt: now });
  }

  /** Takes the head item into a batch. */
  dispatch(): T {
    const { item } = this.head();
    this.queue.shift();
    this.running = item;
    return item;
  }

  complete(now: number): void {
    this.running = undefined;
    this.lastCompletedAt = now;
  }

  /** Takes out every queued item (a running one stays until it completes). */
  takeQueued(): T[] {
    return this.queue.splice(0).map((queued) => queued.item);
  }

  private head(): QueuedItem<T> {
    const head = this.queue[0];
    if (head === undefined) throw new Error(`sequence '${this.key}' has no queued item`);
    return head;
  }

  /** Drops a queued item; false when it is not queued here. */
  remove(item: T): boolean {
    const index = this.queue.findIndex((queued) => queued.item === item);
    if (index < 0) return false;
    this.queue.splice(index, 1);
    return true;
  }
}
