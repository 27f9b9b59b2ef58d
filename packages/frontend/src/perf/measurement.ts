import { setTimeout as sleep } from 'node:timers/promises';
import type { ModelStatistics } from '@tritium/core';
import { LoadGenerator, type SequenceLoad, type Window } from './load-generator.js';
import type { PerfClient } from './perf-client.js';

/** The server's side of a level, from the difference of its statistics: averages per successful request, in microseconds. */
export interface ServerBreakdown {
  readonly inferenceCount: number;
  readonly executionCount: number;
  readonly successCount: number;
  readonly requestUs: number;
  readonly overheadUs: number;
  readonly queueUs: number;
  readonly computeInputUs: number;
  readonly computeInferUs: number;
  readonly computeOutputUs: number;
  readonly cacheHitCount: number;
  readonly cacheMissCount: number;
  /** Cache lookups (hits) and lookups with insertions (misses). */
  readonly cacheUs: number;
}

/** What one level measured, over the windows it reports. */
export interface LevelResult {
  readonly mode: 'concurrency' | 'request-rate';
  readonly level: number;
  readonly stable: boolean;
  readonly trials: number;
  readonly requestCount: number;
  /** Inferences per second: requests × batch size. */
  readonly throughput: number;
  readonly avgUs: number;
  readonly stdUs: number;
  /** Latency percentiles (50, 90, 95, 99 and --percentile's), in microseconds. */
  readonly percentilesUs: ReadonlyMap<number, number>;
  readonly sendUs: number;
  readonly recvUs: number;
  readonly server: ServerBreakdown;
}

export interface MeasureSettings {
  readonly model: string;
  readonly version?: string;
  readonly batchSize: number;
  readonly measurementIntervalMs: number;
  readonly percentile?: number;
  readonly stabilityPercentage: number;
  readonly maxTrials: number;
  /** For a sequence model. */
  readonly sequences?: SequenceLoad;
}

/** A window's edge: when it fell and the server's statistics then. */
interface Boundary {
  readonly at: number;
  readonly stats: ModelStatistics;
}

/** The windows over which stability is judged and the result reported, as perf_analyzer. */
const STABLE_WINDOWS = 3;

/**
 * Measures one level: windows of --measurement-interval follow one another under load
 * until the last three agree within --stability-percentage in throughput and latency
 * (the average, or --percentile's), or --max-trials is reached; reports those three
 * together. `onPass` sees each window as it ends.
 */
export async function measureLevel<P>(
  client: PerfClient<P>,
  requests: readonly P[],
  mode: 'concurrency' | 'request-rate',
  level: number,
  settings: MeasureSettings,
  onPass: (trial: number, window: LevelResult) => void,
): Promise<LevelResult> {
  const generator = new LoadGenerator(client, requests, mode, level, settings.sequences);
  try {
    const boundaries: Boundary[] = [await boundary(client, settings, generator)];
    const windows: Window[] = [];
    const results: LevelResult[] = [];
    for (let trial = 1; trial <= settings.maxTrials; trial++) {
      await sleep(settings.measurementIntervalMs);
      const end = await boundary(client, settings, generator, windows);
      boundaries.push(end);
      const window = summarize(mode, level, settings, windows.slice(-1), boundaries.at(-2)!, end, trial, false);
      results.push(window);
      onPass(trial, window);
      const recent = results.slice(-STABLE_WINDOWS);
      if (recent.length === STABLE_WINDOWS && isStable(recent, settings)) {
        return summarize(mode, level, settings, windows.slice(-STABLE_WINDOWS), boundaries.at(-STABLE_WINDOWS - 1)!, end, trial, true);
      }
    }
    const count = Math.min(STABLE_WINDOWS, windows.length);
    return summarize(mode, level, settings, windows.slice(-count), boundaries.at(-count - 1)!, boundaries.at(-1)!, settings.maxTrials, false);
  } finally {
    await generator.stop();
  }
}

/** Ends the current window (handing it to `windows`) and reads the statistics at that edge. */
async function boundary<P>(client: PerfClient<P>, settings: MeasureSettings, generator: LoadGenerator<P>, windows?: Window[]): Promise<Boundary> {
  const at = performance.now();
  const window = generator.takeWindow();
  windows?.push(window);
  return { at, stats: await client.statistics(settings.model, settings.version) };
}

function isStable(results: readonly LevelResult[], settings: MeasureSettings): boolean {
  const within = (values: number[]) => Math.min(...values) > 0 && Math.max(...values) / Math.min(...values) <= 1 + settings.stabilityPercentage / 100;
  return within(results.map((r) => r.throughput)) && within(results.map((r) => stabilityLatency(r, settings.percentile)));
}

/** The latency stability and the summary use: the average, or --percentile's. */
export function stabilityLatency(result: LevelResult, percentile: number | undefined): number {
  return percentile === undefined ? result.avgUs : result.percentilesUs.get(percentile)!;
}

function summarize(
  mode: LevelResult['mode'],
  level: number,
  settings: MeasureSettings,
  windows: readonly Window[],
  start: Boundary,
  end: Boundary,
  trials: number,
  stable: boolean,
): LevelResult {
  const latencies = Float64Array.from(windows.flatMap((w) => w.latenciesUs)).sort();
  const n = latencies.length;
  const mean = (values: Float64Array) => (values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0);
  const avgUs = mean(latencies);
  const stdUs = Math.sqrt(mean(latencies.map((l) => (l - avgUs) ** 2)));
  const perRequest = (total: number) => (n ? total / n : 0);
  const percentiles = new Map<number, number>();
  for (const p of [50, 90, 95, 99, ...(settings.percentile === undefined ? [] : [settings.percentile])]) {
    percentiles.set(p, n ? latencies[Math.min(n - 1, Math.ceil((p / 100) * n) - 1)]! : 0);
  }
  const seconds = (end.at - start.at) / 1000;
  return {
    mode,
    level,
    stable,
    trials,
    requestCount: n,
    throughput: seconds > 0 ? (n * settings.batchSize) / seconds : 0,
    avgUs,
    stdUs,
    percentilesUs: percentiles,
    sendUs: perRequest(windows.reduce((sum, w) => sum + w.sendUs, 0)),
    recvUs: perRequest(windows.reduce((sum, w) => sum + w.recvUs, 0)),
    server: breakdown(start.stats, end.stats),
  };
}

/** The server's averages between two snapshots of its statistics. */
function breakdown(before: ModelStatistics, after: ModelStatistics): ServerBreakdown {
  const delta = (key: keyof ModelStatistics['inference_stats']) => ({
    count: after.inference_stats[key].count - before.inference_stats[key].count,
    ns: after.inference_stats[key].ns - before.inference_stats[key].ns,
  });
  const success = delta('success');
  // Per successful request, so that the parts add up to the request latency whether or not the cache answered.
  const perRequestUs = (ns: number) => (success.count ? ns / success.count / 1000 : 0);
  const requestUs = perRequestUs(success.ns);
  const queueUs = perRequestUs(delta('queue').ns);
  const computeInputUs = perRequestUs(delta('compute_input').ns);
  const computeInferUs = perRequestUs(delta('compute_infer').ns);
  const computeOutputUs = perRequestUs(delta('compute_output').ns);
  const hit = delta('cache_hit');
  const miss = delta('cache_miss');
  const cacheUs = perRequestUs(hit.ns + miss.ns);
  return {
    inferenceCount: after.inference_count - before.inference_count,
    executionCount: after.execution_count - before.execution_count,
    successCount: success.count,
    requestUs,
    overheadUs: Math.max(0, requestUs - queueUs - computeInputUs - computeInferUs - computeOutputUs - cacheUs),
    queueUs,
    computeInputUs,
    computeInferUs,
    computeOutputUs,
    cacheHitCount: hit.count,
    cacheMissCount: miss.count,
    cacheUs,
  };
}
