import type { Tensor } from '../tensor/tensor.js';

/** Buffers are lent in sizes of powers of two from this up, so batches of varying sizes reuse each other's. */
const SMALLEST_BYTES = 64;
/** Larger buffers are never kept: a rare huge batch must not pin its memory for the rest of the run. */
const LARGEST_KEPT_BYTES = 16 * 2 ** 20;

/**
 * The memory an instance runner lends to the gathered inputs of its executions
 * (gatherBatchInput), so that a steady load allocates nothing per batch. One runner runs
 * one execution at a time, so what one execution borrows is kept for the next one when it
 * ends, except a buffer that can no longer be reused: one an output shares (the callers
 * own it now), one a backend transferred to another thread (detached), or one too large.
 */
export class BatchBuffers {
  /** Buffers given back, ready for the next execution. */
  private free: ArrayBuffer[] = [];
  /** Buffers lent to the running execution. */
  private lent: ArrayBuffer[] = [];

  /** A buffer of at least `bytes`, lent until release(). */
  take(bytes: number): ArrayBuffer {
    const size = sizeFor(bytes);
    for (let i = 0; i < this.free.length; i++) {
      const buffer = this.free[i]!;
      if (buffer.byteLength !== size) continue;
      this.free[i] = this.free[this.free.length - 1]!;
      this.free.pop();
      this.lent.push(buffer);
      return buffer;
    }
    const buffer = new ArrayBuffer(size);
    this.lent.push(buffer);
    return buffer;
  }

  /**
   * The execution ended, with these results: what it borrowed may be lent again, but for
   * buffers that outputs share or that are no longer ours. Buffers left free by the
   * execution before, and not taken by this one, are dropped: what is kept is what one
   * batch needs.
   */
  release(results: readonly (Readonly<Record<string, Tensor>> | Error)[] | undefined): void {
    // Nothing gathered (one request, the common case without batching): nothing changes.
    if (this.lent.length === 0) return;
    const lent = this.lent;
    this.lent = this.free;
    this.lent.length = 0;
    this.free = lent;
    for (let i = lent.length - 1; i >= 0; i--) {
      const buffer = lent[i]!;
      if (buffer.byteLength === 0 || buffer.byteLength > LARGEST_KEPT_BYTES || sharedByOutputs(buffer, results)) {
        lent[i] = lent[lent.length - 1]!;
        lent.pop();
      }
    }
  }
}

/** The buffer size lent for `bytes`: the next power of two, at least SMALLEST_BYTES. */
export function sizeFor(bytes: number): number {
  return bytes <= SMALLEST_BYTES ? SMALLEST_BYTES : 2 ** Math.ceil(Math.log2(bytes));
}

function sharedByOutputs(buffer: ArrayBuffer, results: readonly (Readonly<Record<string, Tensor>> | Error)[] | undefined): boolean {
  if (results === undefined) return false;
  for (const result of results) {
    if (result instanceof Error) continue;
    for (const name in result) {
      const data = result[name]!.data;
      if (ArrayBuffer.isView(data) && data.buffer === buffer) return true;
    }
  }
  return false;
}

/** A request the instance runner is executing: it carries the runner's buffers to gatherBatchInput. */
export interface LendingRequest {
  batchBuffers?: BatchBuffers | undefined;
}
