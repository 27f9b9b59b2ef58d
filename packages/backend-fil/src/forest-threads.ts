import { Worker } from 'node:worker_threads';
import { InferenceError } from '@tritium/core/backend';
import type { ForestArrays } from './forest-walk.mjs';

const WORKER_SCRIPT = new URL('./forest-worker.mjs', import.meta.url);

type TypedArray = Int32Array | Uint32Array | Float32Array | Float64Array;

/** A copy of the array in shared memory, which worker threads read without a copy of their own. */
function shared<T extends TypedArray>(array: T): T {
  const Type = array.constructor as new (buffer: SharedArrayBuffer) => T;
  const copy = new Type(new SharedArrayBuffer(array.byteLength));
  copy.set(array as never);
  return copy;
}

interface Pending {
  remaining: number;
  readonly out: Float64Array;
  readonly resolve: (sums: Float64Array) => void;
  readonly reject: (error: Error) => void;
}

/**
 * Worker threads that evaluate one forest: a batch's rows are split among them, so a
 * large batch runs on every core while the event loop stays free. The forest is copied
 * into shared memory once; each batch's rows and sums are shared too. The threads keep
 * the process alive only while a batch is under way. A thread that fails fails every
 * batch in flight, saying why, and the pool with it (its owner starts another).
 */
export class ForestThreads {
  /** The forest, in shared memory. */
  private readonly forest: ForestArrays;
  private readonly workers: Worker[];
  private readonly pending = new Map<number, Pending>();
  private nextId = 0;
  private failure: Error | undefined;

  constructor(
    forest: ForestArrays,
    count: number,
    private readonly what: string,
  ) {
    this.forest = {
      numFeatures: forest.numFeatures,
      numGroups: forest.numGroups,
      roots: shared(forest.roots),
      treeGroup: shared(forest.treeGroup),
      nodes: shared(forest.nodes),
      threshold: shared(forest.threshold),
      categoryBounds: shared(forest.categoryBounds),
      categoryBits: shared(forest.categoryBits),
    };
    this.workers = Array.from({ length: count }, () => {
      const worker = new Worker(WORKER_SCRIPT, { workerData: { forest: this.forest } });
      worker.unref();
      worker.on('message', (reply: { id: number; error?: string }) => this.settle(reply.id, reply.error));
      worker.on('error', (error) => this.fail(new InferenceError('INTERNAL', `${what}: ${error.message}`)));
      worker.on('exit', (code) => this.fail(new InferenceError('INTERNAL', `${what}: a worker thread exited (code ${code})`)));
      return worker;
    });
  }

  /** The untransformed sums of `rows` rows of `x`, numGroups per row, each thread taking a share. */
  sums(x: Float32Array, rows: number): Promise<Float64Array> {
    if (this.failure) return Promise.reject(this.failure);
    const { numFeatures, numGroups } = this.forest;
    const input = shared(x.subarray(0, rows * numFeatures));
    const out = new Float64Array(new SharedArrayBuffer(rows * numGroups * Float64Array.BYTES_PER_ELEMENT));
    const share = Math.ceil(rows / this.workers.length);
    const slices = this.workers.map((worker, i) => ({ worker, start: i * share, end: Math.min(rows, (i + 1) * share) })).filter((s) => s.start < s.end);
    const id = ++this.nextId;
    if (this.pending.size === 0) for (const worker of this.workers) worker.ref();
    return new Promise((resolve, reject) => {
      this.pending.set(id, { remaining: slices.length, out, resolve, reject });
      for (const { worker, start, end } of slices) {
        worker.postMessage({ id, x: input.subarray(start * numFeatures, end * numFeatures), rows: end - start, out: out.subarray(start * numGroups, end * numGroups) });
      }
    });
  }

  async close(): Promise<void> {
    this.fail(new InferenceError('UNAVAILABLE', `${this.what}: the model was unloaded`));
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }

  private settle(id: number, error: string | undefined): void {
    const entry = this.pending.get(id);
    if (!entry) return;
    if (error !== undefined) {
      this.end(id);
      entry.reject(new InferenceError('INTERNAL', `${this.what}: a worker thread failed: ${error}`));
    } else if (--entry.remaining === 0) {
      this.end(id);
      entry.resolve(entry.out);
    }
  }

  /** The first failure (or close) ends the pool: every batch in flight is rejected with it. */
  private fail(failure: InferenceError): void {
    if (this.failure) return;
    this.failure = failure;
    for (const [id, entry] of this.pending) {
      this.end(id);
      entry.reject(this.failure);
    }
  }

  private end(id: number): void {
    this.pending.delete(id);
    if (this.pending.size === 0) for (const worker of this.workers) worker.unref();
  }
}
