import { performance } from 'node:perf_hooks';
import type { ExecutionTimes } from '../scheduling/execution-times.js';
import { FAILURE_REASONS, type FailureReason } from './failure-reason.js';

/** A count and a total duration, as Triton's statistics report them. */
export interface DurationStat {
  count: number;
  ns: number;
}

export interface BatchStat {
  batch_size: number;
  compute_input: DurationStat;
  compute_infer: DurationStat;
  compute_output: DurationStat;
}

/** One model version's statistics, in the shape of Triton's statistics extension. */
export interface ModelStatistics {
  name: string;
  version: string;
  /** Milliseconds since the epoch of the last successful inference; 0 when none. */
  last_inference: number;
  inference_count: number;
  execution_count: number;
  inference_stats: {
    success: DurationStat;
    fail: DurationStat;
    queue: DurationStat;
    compute_input: DurationStat;
    compute_infer: DurationStat;
    compute_output: DurationStat;
    cache_hit: DurationStat;
    cache_miss: DurationStat;
  };
  batch_stats: BatchStat[];
}

/**
 * Per-request latencies for metrics that need each observation (summaries, histograms),
 * in microseconds; given to a recorder only when such metrics are switched on.
 */
export interface LatencyObserver {
  request(us: number): void;
  queue(us: number): void;
  computeInfer(us: number): void;
  /** Decoupled models: from arrival to the first response. */
  firstResponse(us: number): void;
  /** The version is gone: its series leave the metrics, as Triton removes an unloaded model's. */
  release(): void;
}

const stat = (): DurationStat => ({ count: 0, ns: 0 });
const NS_PER_MS = 1e6;

/**
 * Accumulates one model version's statistics. An execution splits into compute_input,
 * compute_infer and compute_output at the times its backend reported (ExecutionTimes),
 * as Triton's do; a backend that reports none has it all counted as compute_infer.
 */
export class ModelStatisticsRecorder {
  private readonly stats: ModelStatistics;
  private readonly batches = new Map<number, BatchStat>();
  /** Failures by Triton's reason, beside the statistics' single fail count. */
  readonly failures: Record<FailureReason, number> = Object.fromEntries(FAILURE_REASONS.map((reason) => [reason, 0])) as Record<FailureReason, number>;

  constructor(
    name: string,
    version: number,
    private readonly observer?: LatencyObserver,
  ) {
    this.stats = {
      name,
      version: String(version),
      last_inference: 0,
      inference_count: 0,
      execution_count: 0,
      inference_stats: {
        success: stat(),
        fail: stat(),
        queue: stat(),
        compute_input: stat(),
        compute_infer: stat(),
        compute_output: stat(),
        cache_hit: stat(),
        cache_miss: stat(),
      },
      batch_stats: [],
    };
  }

  /** Times are performance.now() milliseconds; `times`: what the backend reported of the request's execution. */
  recordSuccess(batchSize: number, arrival: number, executeStart: number, end: number, times?: ExecutionTimes): void {
    const s = this.stats.inference_stats;
    this.stats.inference_count += batchSize;
    // The clock the end time comes from, turned to epoch milliseconds without a Date.now() call.
    this.stats.last_inference = Math.round(performance.timeOrigin + end);
    add(s.success, (end - arrival) * NS_PER_MS);
    add(s.queue, (executeStart - arrival) * NS_PER_MS);
    const inferNs = addComputePhases(s, executeStart, end, times);
    if (this.observer) {
      this.observer.request((end - arrival) * 1000);
      this.observer.queue((executeStart - arrival) * 1000);
      this.observer.computeInfer(inferNs / 1000);
    }
  }

  /** A response served from the cache: a success with no queue or compute, and a cache hit (its lookup time). */
  recordCacheHit(arrival: number, end: number): void {
    const s = this.stats.inference_stats;
    // As Triton: a hit is a success, but no inference (inference_count counts what models ran).
    this.stats.last_inference = Math.round(performance.timeOrigin + end);
    add(s.success, (end - arrival) * NS_PER_MS);
    add(s.cache_hit, (end - arrival) * NS_PER_MS);
  }

  /** A lookup that missed: its lookup and insertion time. */
  recordCacheMiss(ms: number): void {
    add(this.stats.inference_stats.cache_miss, ms * NS_PER_MS);
  }

  recordFailure(arrival: number, end: number, reason: FailureReason): void {
    add(this.stats.inference_stats.fail, (end - arrival) * NS_PER_MS);
    this.failures[reason] += 1;
  }

  recordFirstResponse(arrival: number, at: number): void {
    this.observer?.firstResponse((at - arrival) * 1000);
  }

  recordExecution(batchSize: number, start: number, end: number, times?: ExecutionTimes): void {
    this.stats.execution_count += 1;
    let batch = this.batches.get(batchSize);
    if (!batch) {
      batch = { batch_size: batchSize, compute_input: stat(), compute_infer: stat(), compute_output: stat() };
      this.batches.set(batchSize, batch);
    }
    addComputePhases(batch, start, end, times);
  }

  /** Whether per-request observations are wanted (summaries or histograms are on). */
  get observed(): boolean {
    return this.observer !== undefined;
  }

  /** The version is unloaded. */
  close(): void {
    this.observer?.release();
  }

  /** The live figures, not a copy: for readers that only read (a metrics scrape). */
  current(): Readonly<ModelStatistics> {
    return this.stats;
  }

  /** The live per-batch-size figures, not copies. */
  batchStats(): Iterable<Readonly<BatchStat>> {
    return this.batches.values();
  }

  snapshot(): ModelStatistics {
    const batch_stats = [...this.batches.values()].sort((a, b) => a.batch_size - b.batch_size);
    return structuredClone({ ...this.stats, batch_stats });
  }
}

function add(target: DurationStat, ns: number): void {
  target.count += 1;
  target.ns += Math.round(ns);
}

/**
 * Adds an execution from `start` to `end` as its three phases, split where its backend
 * reported (unreported: all of it compute_infer); returns the compute_infer nanoseconds.
 */
function addComputePhases(target: Omit<BatchStat, 'batch_size'>, start: number, end: number, times: ExecutionTimes | undefined): number {
  const inferStart = times?.inputEnd(end) ?? start;
  const inferEnd = times?.outputStart(end) ?? end;
  const inferNs = (inferEnd - inferStart) * NS_PER_MS;
  add(target.compute_input, (inferStart - start) * NS_PER_MS);
  add(target.compute_infer, inferNs);
  add(target.compute_output, (end - inferEnd) * NS_PER_MS);
  return inferNs;
}
