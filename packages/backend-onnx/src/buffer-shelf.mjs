// Buffers kept for reuse, shared by the event loop's side of the execution pool
// (shared-buffers.ts) and its threads (pool-thread.mjs). Plain JavaScript so that the
// threads load it unbuilt from src/ and as shipped in dist/.

/** Buffers kept per size: a thread reads one run's inputs at a time, with a few runs queued. */
const KEEP_PER_SIZE = 2;

/** From this size up a kept buffer is dropped once unused for IDLE_MILLISECONDS, so one huge request does not hold its memory for good. */
const LARGE_FROM_BYTES = 16 * 2 ** 20;
const IDLE_MILLISECONDS = 2000;

/**
 * Buffers by power-of-two size, taken and given back run after run, so that a steady
 * load allocates none: a fresh buffer costs its page faults (a 64 MB copy into new memory
 * takes ~50 ms here, into a reused buffer under 10 ms).
 */
export class BufferShelf {
  /** `make(size)`: a new buffer of `size` bytes; `smallest`: the least size handed out. */
  constructor(make, smallest = 1) {
    this.make = make;
    this.smallest = smallest;
    this.kept = new Map();
    this.timers = new Map();
  }

  /** A buffer of at least `bytes`. */
  take(bytes) {
    const size = 2 ** Math.ceil(Math.log2(Math.max(bytes, this.smallest)));
    const buffer = this.kept.get(size)?.pop();
    if (!buffer) return this.make(size);
    clearTimeout(this.timers.get(buffer));
    this.timers.delete(buffer);
    return buffer;
  }

  /** Gives a buffer back once nothing reads it any more; a transferred (detached) one is skipped. */
  give(buffer) {
    const size = buffer.byteLength;
    if (size === 0) return;
    let kept = this.kept.get(size);
    if (!kept) this.kept.set(size, (kept = []));
    if (kept.length >= KEEP_PER_SIZE) return;
    kept.push(buffer);
    if (size < LARGE_FROM_BYTES) return;
    const timer = setTimeout(() => {
      this.timers.delete(buffer);
      kept.splice(kept.indexOf(buffer), 1);
    }, IDLE_MILLISECONDS);
    timer.unref();
    this.timers.set(buffer, timer);
  }
}
