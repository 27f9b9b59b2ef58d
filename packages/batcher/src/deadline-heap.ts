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
    this.siftUp(slot);
  }

  remove(slot: QueueSlot<T>): void {
    const index = slot.heapIndex;
    const last = this.slots.pop();
    if (last === undefined) throw new Error('DeadlineHeap.remove: the heap is empty');
    slot.heapIndex = -1;
    if (last === slot) return;
    this.place(last, index);
    this.siftDown(last);
    this.siftUp(last);
  }

  /** Moves `slot` (already at `slot.heapIndex`) up past every parent that expires after it. */
  private siftUp(slot: QueueSlot<T>): void {
    let index = slot.heapIndex;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = this.slots[parentIndex];
      if (parent === undefined) throw new Error(`DeadlineHeap: no parent at ${parentIndex} of ${this.slots.length}`);
      if (!expiresBefore(slot, parent)) break;
      this.place(parent, index);
      index = parentIndex;
    }
    this.place(slot, index);
  }

  /** Moves `slot` (already at `slot.heapIndex`) down past every child that expires before it. */
  private siftDown(slot: QueueSlot<T>): void {
    let index = slot.heapIndex;
    for (;;) {
      let childIndex = 2 * index + 1;
      let child = this.slots[childIndex];
      // past the end: `index` is a leaf
      if (child === undefined) break;
      const right = this.slots[childIndex + 1];
      if (right !== undefined && expiresBefore(right, child)) {
        childIndex++;
        child = right;
      }
      if (!expiresBefore(child, slot)) break;
      this.place(child, index);
      index = childIndex;
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
