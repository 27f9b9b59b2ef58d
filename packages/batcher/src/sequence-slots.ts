import type { SlotRef } from './sequence.js';

/**
 * Which sequence holds each slot of each instance, and which slots are free. A new sequence
 * takes the lowest free slot index over all instances (Triton orders its ready slots by slot
 * index alone), so new sequences spread across instances before doubling up on one.
 */
export class SequenceSlots<S> {
  private readonly holders: (S | undefined)[][];
  /** Free slots as `slot * instances + instance`, a min-heap: lowest slot, then lowest instance. */
  private readonly free: number[] = [];

  constructor(private readonly instances: number, slotsPerInstance: number) {
    this.holders = Array.from({ length: instances }, () => new Array<S | undefined>(slotsPerInstance).fill(undefined));
    // Ascending order already satisfies the heap property.
    for (let code = 0; code < instances * slotsPerInstance; code++) this.free.push(code);
  }

  /** The holders of one instance's slots, by slot index. */
  of(instance: number): readonly (S | undefined)[] {
    return this.holders[instance];
  }

  /** Seats `holder` in the best free slot; undefined when every slot is taken. */
  seat(holder: S): SlotRef | undefined {
    if (this.free.length === 0) return undefined;
    const code = this.free[0];
    const last = this.free.pop()!;
    if (this.free.length > 0) this.siftDown(last);
    const ref = { instance: code % this.instances, slot: Math.floor(code / this.instances) };
    this.assign(ref, holder);
    return ref;
  }

  /** Hands an occupied slot straight to another holder (a promoted backlog sequence). */
  assign(ref: SlotRef, holder: S): void {
    this.holders[ref.instance][ref.slot] = holder;
  }

  release(ref: SlotRef): void {
    this.holders[ref.instance][ref.slot] = undefined;
    this.siftUp(ref.slot * this.instances + ref.instance);
  }

  private siftUp(code: number): void {
    let at = this.free.length;
    this.free.push(code);
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (this.free[parent] <= code) break;
      this.free[at] = this.free[parent];
      at = parent;
    }
    this.free[at] = code;
  }

  /** Puts `code` at the root and moves it down to its place. */
  private siftDown(code: number): void {
    const heap = this.free;
    let at = 0;
    for (;;) {
      let child = 2 * at + 1;
      if (child >= heap.length) break;
      if (child + 1 < heap.length && heap[child + 1] < heap[child]) child++;
      if (heap[child] >= code) break;
      heap[at] = heap[child];
      at = child;
    }
    heap[at] = code;
  }
}
