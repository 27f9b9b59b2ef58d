import { availableParallelism } from 'node:os';
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

/** One batch under way: its sums fill in as its slices come back. */
interface Batch {
  remaining: number;
  readonly forest: PooledForest;
  readonly out: Float64Array;
  /** The threads given a slice, each of which fails the batch if it dies. */
  readonly threads: Set<ForestThread>;
  readonly resolve: (sums: Float64Array) => void;
  readonly reject: (error: Error) => void;
}

/** One worker thread of the pool, and what it knows and does. */
interface ForestThread {
  readonly worker: Worker;
  /** The forests sent to it, by id. */
  readonly forests: Set<number>;
  /** Slices sent and not yet answered: it holds the process alive while any is. */
  slices: number;
}

/**
 * The worker threads that evaluate the large batches of every FIL model of a backend:
 * one per core at most, started as batches need them and ended when the last model
 * leaves, so threads do not multiply with models. A batch's rows are split among the
 * least busy threads (as many as the model's `cpu_nthread`), so it runs on several cores
 * while the event loop stays free. Each forest is copied into shared memory once and sent
 * to a thread the first time one of its batches goes there; each batch's rows and sums
 * are shared too. Threads hold the process alive only while a batch is under way. A
 * thread that dies fails the batches it had a slice of, naming their models, and leaves
 * the pool; the next batch starts another.
 */
export class ForestPool {
  private readonly threads: ForestThread[] = [];
  private readonly forests = new Set<PooledForest>();
  private readonly batches = new Map<number, Batch>();
  private nextForest = 0;
  private nextBatch = 0;

  constructor(readonly size = availableParallelism()) {}

  /** Threads started now. */
  get threadCount(): number {
    return this.threads.length;
  }

  /** Takes a forest in; `what` ("model 'm'") names it in errors. */
  add(forest: ForestArrays, what: string): PooledForest {
    const pooled = new PooledForest(this, ++this.nextForest, sharedForest(forest), what);
    this.forests.add(pooled);
    return pooled;
  }

  /** The untransformed sums of `rows` rows of `x` for `forest`, split among `threads` threads at most. */
  sums(forest: PooledForest, x: Float32Array, rows: number, threads: number): Promise<Float64Array> {
    if (!this.forests.has(forest)) return Promise.reject(new InferenceError('UNAVAILABLE', `${forest.what}: the model was unloaded`));
    const { numFeatures, numGroups } = forest.arrays;
    if (rows === 0) return Promise.resolve(new Float64Array(0));
    const chosen = this.leastBusy(Math.min(threads, this.size, rows));
    const input = shared(x.subarray(0, rows * numFeatures));
    const out = new Float64Array(new SharedArrayBuffer(rows * numGroups * Float64Array.BYTES_PER_ELEMENT));
    const share = Math.ceil(rows / chosen.length);
    const slices = chosen.map((thread, i) => ({ thread, start: i * share, end: Math.min(rows, (i + 1) * share) })).filter((s) => s.start < s.end);
    const id = ++this.nextBatch;
    return new Promise((resolve, reject) => {
      this.batches.set(id, { remaining: slices.length, forest, out, threads: new Set(slices.map((s) => s.thread)), resolve, reject });
      for (const { thread, start, end } of slices) {
        if (!thread.forests.has(forest.id)) {
          thread.forests.add(forest.id);
          thread.worker.postMessage({ add: forest.id, forest: forest.arrays });
        }
        if (thread.slices++ === 0) thread.worker.ref();
        thread.worker.postMessage({ id, forest: forest.id, x: input.subarray(start * numFeatures, end * numFeatures), rows: end - start, out: out.subarray(start * numGroups, end * numGroups) });
      }
    });
  }

  /** A forest leaves: its batches in flight are refused, and the threads end with the last forest. */
  async remove(forest: PooledForest, why: string): Promise<void> {
    if (!this.forests.delete(forest)) return;
    for (const [id, batch] of this.batches) if (batch.forest === forest) this.settle(id, new InferenceError('UNAVAILABLE', `${forest.what}: ${why}`));
    if (this.forests.size > 0) {
      for (const thread of this.threads) if (thread.forests.delete(forest.id)) thread.worker.postMessage({ drop: forest.id });
      return;
    }
    // A walk is plain JavaScript: terminating a thread in the middle of one is safe.
    const ending = this.threads.splice(0);
    await Promise.all(ending.map(({ worker }) => worker.terminate()));
  }

  /** `count` threads (at most the pool's size) with the fewest slices under way, starting threads while fewer than that are idle. */
  private leastBusy(count: number): ForestThread[] {
    let idle = this.threads.filter((thread) => thread.slices === 0).length;
    for (; idle < count && this.threads.length < this.size; idle++) this.start();
    return [...this.threads].sort((a, b) => a.slices - b.slices).slice(0, count);
  }

  private start(): void {
    const worker = new Worker(WORKER_SCRIPT);
    const thread: ForestThread = { worker, forests: new Set(), slices: 0 };
    worker.unref();
    worker.on('message', (reply: { id: number; error?: string }) => this.answered(thread, reply));
    worker.on('error', (error) => this.lose(thread, `a worker thread failed: ${error.message}`));
    worker.on('exit', (code) => this.lose(thread, `a worker thread exited (code ${code})`));
    this.threads.push(thread);
  }

  private answered(thread: ForestThread, { id, error }: { id: number; error?: string }): void {
    if (--thread.slices === 0) thread.worker.unref();
    const batch = this.batches.get(id);
    if (!batch) return;
    if (error !== undefined) this.settle(id, new InferenceError('INTERNAL', `${batch.forest.what}: a worker thread failed: ${error}`));
    else if (--batch.remaining === 0) this.settle(id);
  }

  /** A thread that died (not one this pool ended) fails the batches it had a slice of and leaves the pool. */
  private lose(thread: ForestThread, why: string): void {
    const index = this.threads.indexOf(thread);
    if (index < 0) return;
    this.threads.splice(index, 1);
    for (const [id, batch] of this.batches) if (batch.threads.has(thread)) this.settle(id, new InferenceError('INTERNAL', `${batch.forest.what}: ${why}`));
  }

  /** Ends a batch: resolved with its sums, or rejected with `failure`. */
  private settle(id: number, failure?: InferenceError): void {
    const batch = this.batches.get(id);
    if (!batch) return;
    this.batches.delete(id);
    if (failure) batch.reject(failure);
    else batch.resolve(batch.out);
  }
}

/** A forest taken into a pool: what a model runs its large batches on, and gives back when it unloads. */
export class PooledForest {
  constructor(
    private readonly pool: ForestPool,
    readonly id: number,
    /** The forest, in shared memory. */
    readonly arrays: ForestArrays,
    readonly what: string,
  ) {}

  /** The untransformed sums of `rows` rows of `x`, numGroups per row, split among `threads` of the pool's threads at most. */
  sums(x: Float32Array, rows: number, threads: number): Promise<Float64Array> {
    return this.pool.sums(this, x, rows, threads);
  }

  /** Leaves the pool: batches in flight fail UNAVAILABLE, and so do later ones. */
  release(): Promise<void> {
    return this.pool.remove(this, 'the model was unloaded');
  }
}

function sharedForest(forest: ForestArrays): ForestArrays {
  return {
    numFeatures: forest.numFeatures,
    numGroups: forest.numGroups,
    roots: shared(forest.roots),
    treeGroup: shared(forest.treeGroup),
    nodes: shared(forest.nodes),
    threshold: shared(forest.threshold),
    categoryBounds: shared(forest.categoryBounds),
    categoryBits: shared(forest.categoryBits),
  };
}
