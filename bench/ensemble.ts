/**
 * An ensemble's own cost (issue 9): three cheap steps (no-op models) as one ensemble,
 * against the application calling the three models one after another. Latency per
 * request with one caller, throughput with 64, in alternating rounds; medians.
 * Run: npx -y pnpm@10.34.9 bench:ensemble
 */
import { rm } from 'node:fs/promises';
import { InferenceServer, type Tensor } from '@tritium/core';
import { measureRate, median, table } from './measure.js';
import { benchRepository, noopBackend, noopConfig } from './noop-backend.js';

const ROUNDS = Number(process.env.ROUNDS ?? 7);
const CALLS = 20_000;
const input: Tensor = { datatype: 'FP32', shape: [4], data: new Float32Array(4) };
// Each step hands its input on as its output.
const step = noopConfig('instance_group { count: 4 kind: KIND_CPU }');
const stepOf = (model: string, from: string, to: string) =>
  `step { model_name: "${model}" model_version: -1 input_map { key: "INPUT0" value: "${from}" } output_map { key: "OUTPUT0" value: "${to}" } }`;
const repository = await benchRepository('tritium-bench-ensemble-', {
  a: step,
  b: step,
  c: step,
  pipeline: `platform: "ensemble"
input { name: "X" data_type: TYPE_FP32 dims: [ 4 ] }
output { name: "Y" data_type: TYPE_FP32 dims: [ 4 ] }
ensemble_scheduling { ${stepOf('a', 'X', 'T1')} ${stepOf('b', 'T1', 'T2')} ${stepOf('c', 'T2', 'Y')} }`,
});
const server = await InferenceServer.start({ modelRepository: repository, backends: [noopBackend()] });

const chained = async () => {
  const a = await server.infer('a', { inputs: { INPUT0: input } });
  const b = await server.infer('b', { inputs: { INPUT0: a.outputs.OUTPUT0! } });
  return server.infer('c', { inputs: { INPUT0: b.outputs.OUTPUT0! } });
};
const ensemble = () => server.infer('pipeline', { inputs: { X: input } });

try {
  const rows: Array<Record<string, string | number>> = [];
  for (const concurrency of [1, 64]) {
    const chainedRates: number[] = [];
    const ensembleRates: number[] = [];
    await measureRate(chained, CALLS / 10, concurrency);
    await measureRate(ensemble, CALLS / 10, concurrency);
    for (let round = 0; round < ROUNDS; round++) {
      chainedRates.push((await measureRate(chained, CALLS, concurrency)).requestsPerSecond);
      ensembleRates.push((await measureRate(ensemble, CALLS, concurrency)).requestsPerSecond);
    }
    const us = (rate: number) => 1e6 / rate;
    rows.push({
      callers: concurrency,
      'chained req/s': median(chainedRates),
      'ensemble req/s': median(ensembleRates),
      'ensemble / chained': median(ensembleRates.map((rate, i) => rate / chainedRates[i]!)),
      'µs added per request': median(ensembleRates.map((rate, i) => us(rate) - us(chainedRates[i]!))),
    });
  }
  table(rows);
} finally {
  await server.stop();
  await rm(repository, { recursive: true, force: true });
}
