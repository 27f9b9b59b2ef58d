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
    return this.row(instance);
  }

  /** Seats `holder` in the best free slot; undefined when every slot is taken. */
  seat(holder: S): SlotRef | undefined {
    const last = this.free.pop();
    if (last === undefined) return undefined;
    // The root is the best free slot; when `last` was the only one, it is the root itself.
    const code = this.free[0] ?? last;
    if (this.free.length > 0) this.siftDown(last);
    const ref = { instance: code % this.instances, slot: Math.floor(code / this.instances) };
    this.assign(ref, holder);
    return ref;
  }

  /** Hands an occupied slot straight to another holder (a promoted backlog sequence). */
  assign(ref: SlotRef, holder: S): void {
    this.row(ref.instance)[ref.slot] = holder;
  }

  release(ref: SlotRef): void {
    this.row(ref.instance)[ref.slot] = undefined;
    this.siftUp(ref.slot * this.instances + ref.instance);
  }

  private row(instance: number): (S | undefined)[] {
    const holders = this.holders[instance];
    if (holders === undefined) throw new RangeError(`instance ${instance} is not in [0, ${this.instances})`);
    return holders;
  }

  private siftUp(code: number): void {
    const heap = this.free;
    let at = heap.length;
    heap.push(code);
    while (at > 0) {
      const parent = (at - 1) >> 1;
      const above = heap[parent];
      if (above === undefined) throw new Error(`SequenceSlots: free-slot heap has no entry ${parent} of ${heap.length}`);
      if (above <= code) break;
      heap[at] = above;
      at = parent;
    }
    heap[at] = code;
  }

  /** Puts `code` at the root and moves it down to its place. */
  private siftDown(code: number): void {
    const heap = this.free;
    let at = 0;
    for (;;) {
      let child = 2 * at + 1;
      let below = heap[child];
      // past the end: `at` is a leaf
      if (below === undefined) break;
      const right = heap[child + 1];
      if (right !== undefined && right < below) {
        child++;
        below = right;
      }
      if (below >= code) break;
      heap[at] = below;
      at = child;
    }
    heap[at] = code;
  }
}
