import type { LevelResult } from './measurement.js';

/** perf_analyzer's -f columns after the first (Concurrency or Request Rate); times in microseconds. */
const COLUMNS = [
  'Inferences/Second',
  'Client Send',
  'Network+Server Send/Recv',
  'Server Queue',
  'Server Compute Input',
  'Server Compute Infer',
  'Server Compute Output',
  'Client Recv',
  'p50 latency',
  'p90 latency',
  'p95 latency',
  'p99 latency',
];

/** perf_analyzer's CSV report: one row per level, in increasing order of throughput, as perf_analyzer sorts it. */
export function perfCsv(results: readonly LevelResult[]): string {
  const first = results[0]?.mode === 'request-rate' ? 'Request Rate' : 'Concurrency';
  const rows = [...results].sort((a, b) => a.throughput - b.throughput).map((r) => {
    const s = r.server;
    const server = s.queueUs + s.computeInputUs + s.computeInferUs + s.computeOutputUs;
    // What the client waited that neither it nor the server's queue and compute account for.
    const network = Math.max(0, r.avgUs - r.sendUs - r.recvUs - server);
    const p = (n: number) => Math.round(r.percentilesUs.get(n)!);
    return [r.level, r.throughput.toFixed(1), ...[r.sendUs, network, s.queueUs, s.computeInputUs, s.computeInferUs, s.computeOutputUs, r.recvUs].map(Math.round), p(50), p(90), p(95), p(99)].join(',');
  });
  return `${[first, ...COLUMNS].join(',')}\n${rows.map((row) => `${row}\n`).join('')}`;
}
