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

/** Latency percentiles (µs) of `calls` calls from `concurrency` callers, with the throughput. */
export async function measureLatency(
  once: () => Promise<unknown>,
  calls: number,
  concurrency: number,
): Promise<{ requestsPerSecond: number; p50: number; p99: number }> {
  const latencies: number[] = [];
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
  latencies.sort((a, b) => a - b);
  const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return { requestsPerSecond: calls / seconds, p50: at(0.5), p99: at(0.99) };
}

export function table(rows: Array<Record<string, string | number>>): void {
  const format = (v: string | number) => (typeof v === 'number' ? (v >= 100 ? v.toFixed(0) : v.toFixed(2)) : v);
  console.table(rows.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, format(v)]))));
}
