import { constants, monitorEventLoopDelay, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';

/** Small timing helpers shared by the benchmarks. Figures are medians of several rounds, since this machine is shared and noisy. */

export interface Rate {
  /** Microseconds per request. */
  usPerRequest: number;
  requestsPerSecond: number;
}

/** Runs `calls` calls of `once` from `concurrency` callers, each waiting for its previous call; returns the rate. */
export async function measureRate(once: () => Promise<unknown>, calls: number, concurrency = 1): Promise<Rate> {
  let remaining = calls;
  const caller = async () => {
    while (remaining-- > 0) await once();
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, caller));
  const seconds = (performance.now() - start) / 1000;
  return { usPerRequest: (seconds * 1e6) / calls, requestsPerSecond: calls / seconds };
}

export interface Comparison {
  /** Median µs per call of each side. */
  baseUs: number;
  candidateUs: number;
  /** Median over rounds of (candidate µs - base µs) and of candidate/base. */
  addedUs: number;
  ratio: number;
}

/**
 * Times two ways of doing the same call in alternating short rounds, so a drift in
 * machine load hits both alike, and reports medians over rounds.
 */
export async function compareInterleaved(
  base: () => Promise<unknown>,
  candidate: () => Promise<unknown>,
  callsPerRound: number,
  rounds: number,
): Promise<Comparison> {
  const sequential = async (once: () => Promise<unknown>) => (await measureRate(once, callsPerRound)).usPerRequest;
  await sequential(base);
  await sequential(candidate);
  const bases: number[] = [];
  const candidates: number[] = [];
  for (let i = 0; i < rounds; i++) {
    bases.push(await sequential(base));
    candidates.push(await sequential(candidate));
  }
  return {
    baseUs: median(bases),
    candidateUs: median(candidates),
    addedUs: median(candidates.map((c, i) => c - bases[i]!)),
    ratio: median(candidates.map((c, i) => c / bases[i]!)),
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/**
 * Latency percentiles (µs) of `calls` calls from `concurrency` callers, with the throughput
 * and the process's CPU time per call (user + system, every thread: `process.cpuUsage`).
 */
export async function measureLatency(
  once: () => Promise<unknown>,
  calls: number,
  concurrency: number,
): Promise<{ requestsPerSecond: number; p50: number; p99: number; cpuUsPerRequest: number }> {
  const latencies: number[] = [];
  const cpu = process.cpuUsage();
  let remaining = calls;
  const caller = async () => {
    while (remaining-- > 0) {
      const start = performance.now();
      await once();
      latencies.push((performance.now() - start) * 1000);
    }
  };
  const start = performance.now();
  await Promise.all(Array.from({ length: concurrency }, caller));
  const seconds = (performance.now() - start) / 1000;
  const { user, system } = process.cpuUsage(cpu);
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { requestsPerSecond: calls / seconds, p50: at(0.5), p99: at(0.99), cpuUsPerRequest: (user + system) / calls };
}

/** The median of per-round figures with their range, so a noisy machine shows as a wide spread. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

export function spread(values: number[]): Spread {
  return { median: median(values), min: Math.min(...values), max: Math.max(...values) };
}

/** Per-round ratios candidate[i] / base[i]: median and range. */
export function ratioSpread(candidate: number[], base: number[]): Spread {
  return spread(candidate.map((c, i) => c / base[i]!));
}

/** "0.27 (0.15–0.58)" */
export function formatSpread({ median: m, min, max }: Spread, digits = 2): string {
  return `${m.toFixed(digits)} (${min.toFixed(digits)}–${max.toFixed(digits)})`;
}

/**
 * Runs every side once per round, in the order given, for one unrecorded warm-up round
 * and then `rounds` recorded ones, so a drift in machine load hits all sides alike.
 * Returns each side's results, one per recorded round.
 */
export async function alternateRounds<K extends string, T>(sides: Record<K, () => Promise<T>>, rounds: number): Promise<Record<K, T[]>> {
  const names = Object.keys(sides) as K[];
  const results = Object.fromEntries(names.map((name) => [name, [] as T[]])) as Record<K, T[]>;
  for (let round = -1; round < rounds; round++) {
    for (const name of names) {
      const result = await sides[name]();
      if (round >= 0) results[name].push(result);
    }
  }
  return results;
}

/**
 * The event loop's delay while `load` runs (monitorEventLoopDelay at 1 ms resolution, so
 * ~1 ms is the floor): p50, p99 and max in ms, how long the load took in seconds, and the
 * mark-compacts meanwhile: under large answers V8 either frees them in young-generation
 * collections or falls into a mark-compact every few hundred milliseconds, and the p99
 * follows which.
 */
export async function loopDelayDuring(load: () => Promise<unknown>): Promise<{ p50: number; p99: number; max: number; seconds: number; markCompacts: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 1 });
  let markCompacts = 0;
  const count = (entries: PerformanceEntry[]) => {
    for (const entry of entries) if ((entry as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) markCompacts++;
  };
  const collections = new PerformanceObserver((list) => count(list.getEntries()));
  collections.observe({ entryTypes: ['gc'] });
  histogram.enable();
  const start = performance.now();
  await load();
  const seconds = (performance.now() - start) / 1000;
  histogram.disable();
  count(collections.takeRecords());
  collections.disconnect();
  return { p50: histogram.percentile(50) / 1e6, p99: histogram.percentile(99) / 1e6, max: histogram.max / 1e6, seconds, markCompacts };
}

export function table(rows: Array<Record<string, string | number>>): void {
  const format = (v: string | number) => (typeof v === 'number' ? (v >= 100 ? v.toFixed(0) : v.toFixed(2)) : v);
  console.table(rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, format(v)]))));
}
