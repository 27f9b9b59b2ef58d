import { cp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { InferenceServer } from '@tritium/core';
import { onnxBackend } from '@tritium/backend-onnx';
import { alternateRounds, formatSpread, measureRate, median, spread, table } from './measure.js';
import { benchRepository } from './noop-backend.js';

/**
 * What a request costs around its run when the caches are cold, as they are after a
 * model whose weights outgrow them (the MLP's are 1 MiB): the tiny model at one caller,
 * raw onnxruntime-node and `server.infer()`, each call preceded by a sweep through
 * SWEEP_KIB of memory, against the same without it. The sweep alone is timed too and
 * taken off. Alternating rounds, medians (ranges).
 */
const MODELS = fileURLToPath(new URL('../packages/backend-onnx/models/', import.meta.url));
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const CALLS = Number(process.env.CALLS ?? 20_000);
const SWEEP_KIB = Number(process.env.SWEEP_KIB ?? 2048);

const config = `platform: "onnxruntime_onnx"
max_batch_size: 64
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] }
`;
const repository = await benchRepository('tritium-cold-cache-', { tiny: config });
await cp(join(MODELS, 'tiny.onnx'), join(repository, 'tiny', '1', 'model.onnx'));
const server = await InferenceServer.start({ modelRepository: repository, backends: [onnxBackend()] });
const session = await ort.InferenceSession.create(join(MODELS, 'tiny.onnx'));

const data = new Float32Array([0.5]);
const raw = () => session.run({ INPUT0: new ort.Tensor('float32', data, [1, 1]) });
const tritium = () => server.infer('tiny', { inputs: { INPUT0: { datatype: 'FP32', shape: [1, 1], data } } });
// One write per cache line: every line of the sweep ends up in the caches, and what was there leaves.
const sweep = new Float64Array((SWEEP_KIB * 1024) / Float64Array.BYTES_PER_ELEMENT);
let written = 0;
const sweepCaches = () => {
  for (let i = 0; i < sweep.length; i += 8) sweep[i] = written++;
};
const swept = (call: () => Promise<unknown>) => () => {
  sweepCaches();
  return call();
};
const usPerCall = (call: () => Promise<unknown>) => async () => (await measureRate(call, CALLS)).usPerRequest;

// The model's choice settles (its tiny runs go inline) before anything is timed.
for (let i = 0; i < 5_000; i++) await tritium();
const r = await alternateRounds(
  {
    raw: usPerCall(raw),
    tritium: usPerCall(tritium),
    sweep: usPerCall(async () => sweepCaches()),
    rawCold: usPerCall(swept(raw)),
    tritiumCold: usPerCall(swept(tritium)),
  },
  ROUNDS,
);
const minusSweep = (values: number[]) => values.map((v, i) => v - r.sweep[i]!);
const added = (candidate: number[], base: number[]) => candidate.map((c, i) => c - base[i]!);
const hotAdded = added(r.tritium, r.raw);
const coldAdded = added(minusSweep(r.tritiumCold), minusSweep(r.rawCold));
console.log(`\nThe tiny model at 1 caller, with and without a ${SWEEP_KIB} KiB sweep of memory before each call (${ROUNDS} alternating rounds, ${CALLS} calls each; µs per call, the sweep's own time taken off)`);
table([
  { caches: 'warm', 'raw µs': median(r.raw).toFixed(1), 'Tritium µs': median(r.tritium).toFixed(1), 'Tritium − raw µs': formatSpread(spread(hotAdded), 1) },
  {
    caches: 'cold',
    'raw µs': median(minusSweep(r.rawCold)).toFixed(1),
    'Tritium µs': median(minusSweep(r.tritiumCold)).toFixed(1),
    'Tritium − raw µs': formatSpread(spread(coldAdded), 1),
  },
]);
console.log(`sweep alone: ${median(r.sweep).toFixed(1)} µs; Tritium's added time, cold ÷ warm: ${(median(coldAdded) / median(hotAdded)).toFixed(2)}`);
await session.release();
await server.stop();
await rm(repository, { recursive: true, force: true });
