import type { QueueSlot } from './queue-slot.js';

/**
 * Slots with a timeout, earliest deadline first. Each slot knows its index, so a slot
 * that leaves the queue early (batched, cancelled) leaves the heap in O(log n)
 * instead of lingering until its deadline.
 */
export class DeadlineHeap<T> {
  private readonly slots: QueueSlot<T>[] = [];

  get size(): number {
    return this.slots.length;
  }

  peek(): QueueSlot<T> | undefined {
    return this.slots[0];
  }

  push(slot: QueueSlot<T>): void {
    slot.heapIndex = this.slots.length;
    this.slots.push(slot);
    this.siftUp(slot.heapIndex);
  }

  remove(slot: QueueSlot<T>): void {
    const index = slot.heapIndex;
    const last = this.slots.pop()!;
    slot.heapIndex = -1;
    if (last === slot) return;
    this.place(last, index);
    this.siftDown(index);
    this.siftUp(last.heapIndex);
  }

  private siftUp(index: number): void {
    const slot = this.slots[index];
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = this.slots[parentIndex];
      if (!expiresBefore(slot, parent)) break;
      this.place(parent, index);
      index = parentIndex;
    }
    this.place(slot, index);
  }

  private siftDown(index: number): void {
    const slot = this.slots[index];
    const count = this.slots.length;
    for (;;) {
      let child = 2 * index + 1;
      if (child >= count) break;
      if (child + 1 < count && expiresBefore(this.slots[child + 1], this.slots[child])) child++;
      if (!expiresBefore(this.slots[child], slot)) break;
      this.place(this.slots[child], index);
      index = child;
    }
    this.place(slot, index);
  }

  private place(slot: QueueSlot<T>, index: number): void {
    this.slots[index] = slot;
    slot.heapIndex = index;
  }
}

/** Earlier deadline first; equal deadlines in arrival order, so expiries keep FIFO order. */
function expiresBefore<T>(a: QueueSlot<T>, b: QueueSlot<T>): boolean {
  return a.deadline < b.deadline || (a.deadline === b.deadline && a.arrival < b.arrival);
}
