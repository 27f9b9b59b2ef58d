/**
 * How hard `tritium perf` can push, and whether it measures what the benchmarks measure
 * (issue 22 §3). 1. Its load generator against a no-op model in-process, so the figure is
 * the generator's and the server's own cost: closed loop at rising concurrency, then open
 * loop at rising rates until the rate achieved falls short of the rate asked, beside a
 * bare loop of 64 `server.infer()` callers (the ceiling). 2. The tiny ONNX model as
 * bench/frontend.ts configures it, at 1 and 64 callers: bench/measure.ts's measureLatency
 * (the in-process row of the README's table) and `tritium perf`'s measurement, in
 * alternating rounds.
 *   npx -y pnpm@10.34.9 bench:perf      (WINDOW_MS=1000, ROUNDS=3 by default)
 */
import { rm } from 'node:fs/promises';
import { onnxBackend } from '@tritium/backend-onnx';
import { InferenceServer, type Tensor } from '@tritium/core';
import { InProcessClient } from '../packages/frontend/src/perf/inprocess-client.js';
import { measureLevel, type MeasureSettings } from '../packages/frontend/src/perf/measurement.js';
import { measureLatency, median } from './measure.js';
import { benchRepository, noopBackend, noopConfig, noopInput as input } from './noop-backend.js';
import { copyOnnxModel, onnxConfig } from './tiny-onnx.js';

const WINDOW_MS = Number(process.env.WINDOW_MS ?? 1000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const settings: MeasureSettings = { model: 'noop', batchSize: 1, measurementIntervalMs: WINDOW_MS, stabilityPercentage: 10, maxTrials: 6 };

const repository = await benchRepository('tritium-perf-bench-', { noop: noopConfig('max_batch_size: 8'), tiny: onnxConfig('1', 'inline') });
await copyOnnxModel(repository, 'tiny', 'tiny.onnx');
const server = await InferenceServer.start({ modelRepository: repository, backends: [noopBackend(), onnxBackend()] });
const client = new InProcessClient(server);
const requests = [client.prepare('noop', undefined, { INPUT0: input })];
const k = (n: number) => `${(n / 1000).toFixed(1)}k`;

/** 64 callers of server.infer() in a bare loop for one window: the most the server answers here. */
async function bareLoop(): Promise<number> {
  let count = 0;
  const end = performance.now() + WINDOW_MS;
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (performance.now() < end) {
      await server.infer('noop', { inputs: { INPUT0: input } });
      count++;
    }
  }));
  return (count * 1000) / WINDOW_MS;
}

try {
  console.log(`bare loop, 64 callers: ${k(await bareLoop())} req/s`);
  for (const concurrency of [1, 4, 16, 64, 256]) {
    const r = await measureLevel(client, requests, 'concurrency', concurrency, settings, () => {});
    console.log(`closed loop, concurrency ${concurrency}: ${k(r.throughput)} infer/s, p50 ${r.percentilesUs.get(50)!.toFixed(0)} µs, p99 ${r.percentilesUs.get(99)!.toFixed(0)} µs${r.stable ? '' : ' (unstable)'}`);
  }
  for (let rate = 10_000; rate <= 1_000_000; rate *= 2) {
    const r = await measureLevel(client, requests, 'request-rate', rate, settings, () => {});
    console.log(`open loop, ${k(rate)} req/s asked: ${k(r.throughput)} achieved, p50 ${r.percentilesUs.get(50)!.toFixed(0)} µs, p99 ${r.percentilesUs.get(99)!.toFixed(0)} µs`);
    if (r.throughput < 0.95 * rate) break;
  }
  console.log(`bare loop, 64 callers: ${k(await bareLoop())} req/s`);

  const tinyInput: Tensor = { datatype: 'FP32', shape: [1, 1], data: Float32Array.of(1) };
  const tinyRequests = [client.prepare('tiny', undefined, { INPUT0: tinyInput })];
  const tinySettings = { ...settings, model: 'tiny' };
  for (const concurrency of [1, 64]) {
    const bench: number[] = [];
    const perf: number[] = [];
    const benchP50: number[] = [];
    const perfP50: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const b = await measureLatency(() => server.infer('tiny', { inputs: { INPUT0: tinyInput } }), concurrency === 1 ? 50_000 : 100_000, concurrency);
      bench.push(b.requestsPerSecond);
      benchP50.push(b.p50);
      const p = await measureLevel(client, tinyRequests, 'concurrency', concurrency, tinySettings, () => {});
      perf.push(p.throughput);
      perfP50.push(p.percentilesUs.get(50)!);
    }
    const ratio = median(perf) / median(bench);
    console.log(`tiny, ${concurrency} caller(s), medians of ${ROUNDS}: bench measureLatency ${k(median(bench))} req/s (p50 ${median(benchP50).toFixed(1)} µs), tritium perf ${k(median(perf))} infer/s (p50 ${median(perfP50).toFixed(1)} µs): perf / bench ${ratio.toFixed(2)}`);
  }
} finally {
  await client.close();
  await rm(repository, { recursive: true, force: true });
}
