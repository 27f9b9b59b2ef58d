import type { QueueSlot } from './queue-slot.js';

/**
 * A FIFO of slots, doubly linked through the slots themselves, so that taking out a
 * cancelled item from the middle costs O(1) and no walk ever meets a dead entry.
 */
export class SlotList<T> {
  head: QueueSlot<T> | undefined = undefined;
  private tail: QueueSlot<T> | undefined = undefined;
  size = 0;

  /** @param rank position of this list in service order (across all priority levels) */
  constructor(readonly rank: number) {}

  push(slot: QueueSlot<T>): void {
    slot.list = this;
    slot.prev = this.tail;
    slot.next = undefined;
    if (this.tail) this.tail.next = slot;
    else this.head = slot;
    this.tail = slot;
    this.size++;
  }

  remove(slot: QueueSlot<T>): void {
    if (slot.prev) slot.prev.next = slot.next;
    else this.head = slot.next;
    if (slot.next) slot.next.prev = slot.prev;
    else this.tail = slot.prev;
    slot.prev = slot.next = slot.list = undefined;
    this.size--;
  }
}
