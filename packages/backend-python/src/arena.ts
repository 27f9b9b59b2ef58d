import { SharedRegion } from './shared-region.js';

/** Allocations start on 64-byte boundaries (cache lines; any datatype's alignment). */
const ALIGNMENT = 64;
const MiB = 1 << 20;

/** One lease's bytes. `lease` and `region` are null when there are no bytes to place. */
export interface Allocation {
  /** The frame's `"lease"`: released by the receiver's `free` (or by the owner itself). */
  readonly lease: number | null;
  readonly region: SharedRegion | null;
  readonly offset: number;
}

/** Several tensors under one lease: each starts 64-byte aligned; a zero-byte one gets offset 0. */
export interface Allocations {
  readonly lease: number | null;
  readonly region: SharedRegion | null;
  readonly offsets: number[];
}

/** A live placement in a region's ring. */
interface Slot {
  readonly start: number;
  readonly end: number;
  released: boolean;
}

interface RegionState {
  readonly region: SharedRegion;
  /** Placements in ring order; those before `first` are reclaimed. */
  ring: Slot[];
  first: number;
  live: number;
  retired: boolean;
}

/**
 * The owner's side of PROTOCOL.md's shared memory: regions `<prefix><gen>` in `dir`, each
 * used as a ring of allocations (one lease per frame). When nothing fits, the next region
 * (twice the last, or the next power of two that holds the allocation; with a `growthSize`,
 * Triton's shm-growth-byte-size rule: the last plus whole growth steps, one more than the
 * allocation needs) takes over and the current one is retired: it is unlinked and dropped
 * once its last lease is released.
 * Leases may be released in any order; the ring reclaims only its released prefix.
 */
export class Arena {
  private current: RegionState | undefined;
  private readonly retired = new Set<RegionState>();
  private readonly leases = new Map<number, { state: RegionState; slot: Slot }>();
  private nextLease = 1;
  private nextGeneration = 0;
  private closed = false;

  constructor(
    readonly dir: string,
    /** File-name prefix, generation appended: `<shm-prefix>-n` for Node's arena. */
    readonly prefix: string,
    readonly initialSize = MiB,
    /** Undefined: each region twice the last. */
    readonly growthSize?: number,
  ) {
    if (!Number.isSafeInteger(initialSize) || initialSize <= 0) throw new RangeError(`an arena's initial size must be a positive integer, not ${initialSize}`);
    if (growthSize !== undefined && (!Number.isSafeInteger(growthSize) || growthSize <= 0)) {
      throw new RangeError(`an arena's growth size must be a positive integer, not ${growthSize}`);
    }
  }

  allocate(byteLength: number): Allocation {
    const { lease, region, offsets } = this.allocateMany([byteLength]);
    return { lease, region, offset: offsets[0]! };
  }

  allocateMany(byteLengths: readonly number[]): Allocations {
    if (this.closed) throw new Error(`the shared-memory arena ${this.prefix} is closed`);
    const offsets: number[] = [];
    let total = 0;
    for (const length of byteLengths) {
      if (!Number.isSafeInteger(length) || length < 0) throw new RangeError(`an allocation needs a non-negative integer byte length, not ${length}`);
      offsets.push(length === 0 ? -1 : total);
      total += alignUp(length);
    }
    if (total === 0) return { lease: null, region: null, offsets: offsets.map(() => 0) };

    let state = this.current;
    let start = state ? place(state, total) : null;
    if (state === undefined || start === null) {
      state = this.startRegion(state ? this.grown(state.region.size, total) : total <= this.initialSize ? this.initialSize : this.grown(this.initialSize, total));
      start = 0;
    }
    const slot: Slot = { start, end: start + total, released: false };
    state.ring.push(slot);
    state.live += 1;
    const lease = this.nextLease++;
    this.leases.set(lease, { state, slot });
    return { lease, region: state.region, offsets: offsets.map((offset) => (offset < 0 ? 0 : start + offset)) };
  }

  /** Returns a lease's bytes to the arena; false when the lease is not live (unknown, or released already). */
  release(lease: number | null): boolean {
    const entry = lease === null ? undefined : this.leases.get(lease);
    if (!entry) return false;
    this.leases.delete(lease!);
    entry.slot.released = true;
    entry.state.live -= 1;
    if (entry.state.retired && entry.state.live === 0) this.drop(entry.state);
    return true;
  }

  /** Unlinks and drops every region; later allocations throw. Mappings go when their views are collected. */
  close(): void {
    this.closed = true;
    for (const state of this.retired) this.drop(state);
    if (this.current) this.drop(this.current);
    this.current = undefined;
    this.leases.clear();
  }

  /** The size of the region after one of `size` that could not take `total` bytes. */
  private grown(size: number, total: number): number {
    if (this.growthSize === undefined) return Math.max(2 * size, nextPowerOfTwo(total));
    return size + this.growthSize * (Math.floor(total / this.growthSize) + 1);
  }

  private startRegion(size: number): RegionState {
    const state: RegionState = {
      region: SharedRegion.create(this.dir, `${this.prefix}${this.nextGeneration}`, size),
      ring: [],
      first: 0,
      live: 0,
      retired: false,
    };
    this.nextGeneration += 1;
    const previous = this.current;
    this.current = state;
    if (previous) {
      previous.retired = true;
      previous.ring = [];
      if (previous.live === 0) this.drop(previous);
      else this.retired.add(previous);
    }
    return state;
  }

  private drop(state: RegionState): void {
    this.retired.delete(state);
    state.region.unlink();
  }
}

/** Where `need` bytes go in the region's ring, or null when they do not fit. */
function place(state: RegionState, need: number): number | null {
  const { ring, region } = state;
  while (state.first < ring.length && ring[state.first]!.released) state.first += 1;
  if (state.first === ring.length) {
    ring.length = 0;
    state.first = 0;
    return need <= region.size ? 0 : null;
  }
  if (state.first >= 64 && state.first * 2 >= ring.length) {
    state.ring = ring.slice(state.first);
    state.first = 0;
    return place(state, need);
  }
  const oldest = ring[state.first]!.start;
  const newest = ring[ring.length - 1]!;
  if (newest.start >= oldest) {
    // Not wrapped: the space after the newest, else the space before the oldest.
    if (newest.end + need <= region.size) return newest.end;
    return need <= oldest ? 0 : null;
  }
  // Wrapped: only the gap between the newest and the oldest.
  return newest.end + need <= oldest ? newest.end : null;
}

function alignUp(length: number): number {
  return Math.ceil(length / ALIGNMENT) * ALIGNMENT;
}

function nextPowerOfTwo(n: number): number {
  return 2 ** Math.ceil(Math.log2(n));
}
