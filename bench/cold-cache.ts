import { cp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { InferenceServer } from '@tritium/core';
import { onnxBackend } from '@tritium/backend-onnx';
import { alternateRounds, formatSpread, median, spread, table } from './measure.js';
import { benchRepository } from './noop-backend.js';

/**
 * What a request costs around its run when the caches are cold, as they are after a
 * model whose weights outgrow them: the tiny model at one caller, raw onnxruntime-node
 * and `server.infer()`, each call preceded by a sweep through SWEEP_KIB of memory,
 * against the same without it; each call is timed alone, the sweep outside it. Then the
 * MLP (1 MiB of weights) at one caller, whose own runs do what the sweep does.
 * Alternating rounds, medians (ranges).
 */
const MODELS = fileURLToPath(new URL('../packages/backend-onnx/models/', import.meta.url));
const ROUNDS = Number(process.env.ROUNDS ?? 15);
const CALLS = Number(process.env.CALLS ?? 10_000);
const SWEEP_KIB = Number(process.env.SWEEP_KIB ?? 2048);

const configOf = (width: number) => `platform: "onnxruntime_onnx"
max_batch_size: 64
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ ${width} ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ ${width} ] }
`;
const widths = { tiny: 1, mlp: 256 };
const repository = await benchRepository('tritium-cold-cache-', { tiny: configOf(widths.tiny), mlp: configOf(widths.mlp) });
for (const name of ['tiny', 'mlp']) await cp(join(MODELS, `${name}.onnx`), join(repository, name, '1', 'model.onnx'));
const server = await InferenceServer.start({ modelRepository: repository, backends: [onnxBackend()] });
const sessions = { tiny: await ort.InferenceSession.create(join(MODELS, 'tiny.onnx')), mlp: await ort.InferenceSession.create(join(MODELS, 'mlp.onnx')) };

const inputs = { tiny: new Float32Array(widths.tiny).fill(0.5), mlp: new Float32Array(widths.mlp).fill(0.5) };
const rawOf = (name: 'tiny' | 'mlp') => () => sessions[name].run({ INPUT0: new ort.Tensor('float32', inputs[name], [1, widths[name]]) });
const tritiumOf = (name: 'tiny' | 'mlp') => () => server.infer(name, { inputs: { INPUT0: { datatype: 'FP32', shape: [1, widths[name]], data: inputs[name] } } });
const raw = rawOf('tiny');
const tritium = tritiumOf('tiny');
// One read per cache line, as a model reads its weights: the sweep's lines fill the caches, and what was there leaves.
const sweep = new Float64Array((SWEEP_KIB * 1024) / Float64Array.BYTES_PER_ELEMENT).fill(1);
let sum = 0;
const sweepCaches = () => {
  for (let i = 0; i < sweep.length; i += 8) sum += sweep[i]!;
};
/** Median µs of `call`, each timed alone; `cold`: each call follows a sweep. */
const usPerCall = (call: () => Promise<unknown>, cold: boolean) => async () => {
  const times: number[] = new Array(CALLS);
  for (let i = 0; i < CALLS; i++) {
    if (cold) sweepCaches();
    const start = performance.now();
    await call();
    times[i] = (performance.now() - start) * 1000;
  }
  return median(times);
};

// The models' choices settle (their runs at batch 1 go inline) before anything is timed.
for (let i = 0; i < 5_000; i++) await tritium();
for (let i = 0; i < 2_000; i++) await tritiumOf('mlp')();
const r = await alternateRounds(
  {
    raw: usPerCall(raw, false),
    tritium: usPerCall(tritium, false),
    rawCold: usPerCall(raw, true),
    tritiumCold: usPerCall(tritium, true),
    mlpRaw: usPerCall(rawOf('mlp'), false),
    mlpTritium: usPerCall(tritiumOf('mlp'), false),
  },
  ROUNDS,
);
const added = (candidate: number[], base: number[]) => candidate.map((c, i) => c - base[i]!);
const hotAdded = added(r.tritium, r.raw);
const coldAdded = added(r.tritiumCold, r.rawCold);
console.log(`\nThe tiny model at 1 caller, with and without a ${SWEEP_KIB} KiB sweep of memory before each call (${ROUNDS} alternating rounds, ${CALLS} calls each; µs per call, the median of calls each timed alone)`);
table([
  { caches: 'warm', 'raw µs': median(r.raw).toFixed(1), 'Tritium µs': median(r.tritium).toFixed(1), 'Tritium − raw µs': formatSpread(spread(hotAdded), 1) },
  {
    caches: 'cold',
    'raw µs': median(r.rawCold).toFixed(1),
    'Tritium µs': median(r.tritiumCold).toFixed(1),
    'Tritium − raw µs': formatSpread(spread(coldAdded), 1),
  },
]);
console.log(`Tritium's added time, cold ÷ warm: ${(median(coldAdded) / median(hotAdded)).toFixed(2)}`);
const mlpAdded = added(r.mlpTritium, r.mlpRaw);
console.log(
  `The MLP (1 MiB of weights, which leave the caches as cold as the sweep) at 1 caller: raw ${median(r.mlpRaw).toFixed(1)} µs, Tritium ${median(r.mlpTritium).toFixed(1)} µs, ` +
    `Tritium − raw ${formatSpread(spread(mlpAdded), 1)} µs (${(median(mlpAdded) / median(hotAdded)).toFixed(2)} × the tiny model's, warm)`,
);
for (const session of Object.values(sessions)) await session.release();
await server.stop();
await rm(repository, { recursive: true, force: true });
