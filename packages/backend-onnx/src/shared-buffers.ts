/**
 * Inputs this large cross to a pool thread through a SharedArrayBuffer: one copy here and
 * one there (onnxruntime-node refuses SharedArrayBuffer-backed tensors, "Invalid argument",
 * so the thread copies into a buffer of its own), which beats a structured clone from
 * 16 KB up: round trips of 25 against 32 µs at 16 KB, 85 against 215 µs at 256 KB,
 * 1.0 against 3.1 ms at 4 MB on the 2-core machine. Below it a clone costs the same.
 */
export const SHARED_FROM_BYTES = 16 * 1024;

/** The largest buffer kept for reuse: larger ones are made for one run and left to the collector. */
const KEEP_UP_TO_BYTES = 16 * 2 ** 20;

/** Buffers kept per size: a thread reads one run's inputs at a time, with a few runs queued. */
const KEEP_PER_SIZE = 2;

/**
 * SharedArrayBuffers by power-of-two size, reused run after run so that steady load
 * allocates none (pool-thread.mjs keeps its own buffers the same way).
 */
export class SharedBufferPool {
  private readonly free = new Map<number, SharedArrayBuffer[]>();

  /** A buffer of at least `bytes`. */
  take(bytes: number): SharedArrayBuffer {
    const size = 2 ** Math.ceil(Math.log2(Math.max(bytes, SHARED_FROM_BYTES)));
    return this.free.get(size)?.pop() ?? new SharedArrayBuffer(size);
  }

  /** Gives a buffer back once its run's inputs have been read. */
  give(buffer: SharedArrayBuffer): void {
    if (buffer.byteLength > KEEP_UP_TO_BYTES) return;
    let kept = this.free.get(buffer.byteLength);
    if (!kept) this.free.set(buffer.byteLength, (kept = []));
    if (kept.length < KEEP_PER_SIZE) kept.push(buffer);
  }
}
