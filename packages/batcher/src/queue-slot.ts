import type { SlotList } from './slot-list.js';

/**
 * The queue's record of one queued item: its place in a level's list (links), when it
 * came, and its timeout deadline (position in the deadline heap). The item points to
 * it while queued (QueuedItem.queueSlot), so the item's own fields stay the caller's.
 */
export class QueueSlot<T> {
  prev: QueueSlot<T> | undefined = undefined;
  next: QueueSlot<T> | undefined = undefined;
  /** the list holding the slot now (a level's waiting or delayed list); undefined once out */
  list: SlotList<T> | undefined = undefined;
  /** index in the deadline heap, -1 when not in it */
  heapIndex = -1;

  constructor(
    readonly item: T,
    /** arrival number: orders slots whose deadlines are equal */
    readonly arrival: number,
    /** clock time (µs) of the enqueue: the queue delay counts from here */
    readonly enqueuedAt: number,
    /** clock time (µs) the queue timeout expires; Infinity for none */
    readonly deadline: number,
  ) {}
}
