/**
 * What metrics cost per request (issue 9): servers over the same no-op backend (the
 * worst case: nothing else per request) with metrics off, with the defaults (Triton's
 * counters, read from the statistics when scraped), off again (A/A), with histograms,
 * and with Triton's summaries (both observe each request). Throughput at 1 and 64 callers, in alternating rounds, with
 * a scrape between rounds; medians of the per-round ratios to "off".
 * Run: npx -y pnpm@10.34.9 bench:metrics
 */
import { rm } from 'node:fs/promises';
import { InferenceServer, type MetricsOptions, type Tensor } from '@tritium/core';
import { median, measureRate, table } from './measure.js';
import { benchRepository, noopBackend, noopConfig } from './noop-backend.js';

const ROUNDS = Number(process.env.ROUNDS ?? 7);
const CALLS = 20_000;
const input: Tensor = { datatype: 'FP32', shape: [1, 4], data: new Float32Array(4) };
const repository = await benchRepository('tritium-bench-metrics-', { noop: noopConfig('max_batch_size: 8') });
const variants: Array<[string, MetricsOptions | false]> = [
  ['metrics off', false],
  ['defaults (counters)', {}],
  // The same as the first: how far apart two equal servers measure (the noise to read the others against).
  ['metrics off again (A/A)', false],
  ['histograms', { histogramLatencies: true }],
  ['summaries', { summaryLatencies: true }],
];
const servers = await Promise.all(variants.map(([, metrics]) => InferenceServer.start({ modelRepository: repository, backends: [noopBackend()], metrics })));

try {
  const rows: Array<Record<string, string | number>> = [];
  for (const concurrency of [1, 64]) {
    const rates = variants.map((): number[] => []);
    const run = (server: InferenceServer) => measureRate(() => server.infer('noop', { inputs: { INPUT0: input } }), CALLS, concurrency);
    for (const server of servers) await run(server);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, server] of servers.entries()) {
        rates[i]!.push((await run(server)).requestsPerSecond);
        if (variants[i]![1] !== false) await server.metrics();
      }
    }
    variants.forEach(([name], i) =>
      rows.push({ callers: concurrency, metrics: name, 'requests/s': median(rates[i]!), 'vs off': median(rates[i]!.map((rate, round) => rate / rates[0]![round]!)) }),
    );
  }
  table(rows);
} finally {
  await Promise.all(servers.map((server) => server.stop()));
  await rm(repository, { recursive: true, force: true });
}
