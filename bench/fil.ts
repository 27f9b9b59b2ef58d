/**
 * The FIL backend against LightGBM's own predict() in Python: a 500-tree binary
 * LightGBM model on 32 features, rows/s at batch 1 and batch 1024, through
 * server.infer() (large batches on its worker threads, one per core) and the bare
 * evaluator (no server, one thread). Rounds alternate Python and Node so machine load
 * hits both alike; figures are medians of ROUNDS (default 5).
 * Needs python3 with lightgbm. Run: npx -y pnpm@10.34.9 bench:fil
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { InferenceServer } from '@tritium/core';
import { filBackend } from '@tritium/backend-fil';
import { predict } from '../packages/backend-fil/src/forest.js';
import { readLightGbm } from '../packages/backend-fil/src/lightgbm.js';
import { median, measureRate, table } from './measure.js';

const FEATURES = 32;
const ROUNDS = Number(process.env.ROUNDS ?? 5);
type LightGbmRates = Record<'batch1' | 'batch1024' | 'batch1_1thread' | 'batch1024_1thread' | 'trees', number>;
const directory = await mkdtemp(join(tmpdir(), 'tritium-bench-fil-'));
try {
  const script = fileURLToPath(new URL('./fil_reference.py', import.meta.url));
  const python = async (mode: 'train' | 'measure') => (await promisify(execFile)('python3', [script, mode, directory], { timeout: 300_000 })).stdout;
  await python('train');
  const lightgbmRound = async () => JSON.parse((await python('measure')).trim().split('\n').at(-1)!) as LightGbmRates;
  const modelText = await readFile(join(directory, 'model.txt'), 'utf8');
  const bytes = await readFile(join(directory, 'x.f32'));
  const x = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);

  const repository = join(directory, 'repository');
  await mkdir(join(repository, 'forest', '1'), { recursive: true });
  await writeFile(join(repository, 'forest', '1', 'model.txt'), modelText);
  await writeFile(join(repository, 'forest', 'config.pbtxt'), `backend: "fil"
max_batch_size: 1024
input [ { name: "input__0" data_type: TYPE_FP32 dims: [ ${FEATURES} ] } ]
output [ { name: "output__0" data_type: TYPE_FP32 dims: [ 1 ] } ]
instance_group [ { kind: KIND_CPU } ]
parameters { key: "model_type" value { string_value: "lightgbm" } }
`);
  const server = await InferenceServer.start({ modelRepository: repository, backends: [filBackend()] });
  const forest = readLightGbm(modelText, 'model.txt');

  const inputs = (batch: number) => ({ input__0: { datatype: 'FP32' as const, shape: [batch, FEATURES], data: x.slice(0, batch * FEATURES) } });
  const rate = async (once: () => Promise<unknown>, batch: number, calls: number) => (await measureRate(once, calls)).requestsPerSecond * batch;
  const sides = {
    server: (batch: number, calls: number) => rate(() => server.infer('forest', { inputs: inputs(batch) }), batch, calls),
    bare: (batch: number, calls: number) => rate(async () => predict(forest, inputs(batch).input__0.data, batch), batch, calls),
  };
  const CALLS = { 1: 3000, 1024: 20 } as const;
  // Warm-up: the JIT, and the worker threads a large batch starts.
  for (const batch of [1, 1024] as const) for (const side of Object.values(sides)) await side(batch, CALLS[batch]);
  const figures: Record<string, number[]> = {};
  const add = (key: string, value: number) => (figures[key] ??= []).push(value);
  let lightgbm: LightGbmRates | undefined;
  for (let round = 0; round < ROUNDS; round++) {
    lightgbm = await lightgbmRound();
    for (const batch of [1, 1024] as const) {
      add(`lightgbm ${batch}`, lightgbm[`batch${batch}`]);
      add(`lightgbm1 ${batch}`, lightgbm[`batch${batch}_1thread`]);
      add(`server ${batch}`, await sides.server(batch, CALLS[batch]));
      add(`bare ${batch}`, await sides.bare(batch, CALLS[batch]));
    }
  }
  const rows = ([1, 1024] as const).map((batch) => {
    const [served, evaluator, reference, oneThread] = ['server', 'bare', 'lightgbm', 'lightgbm1'].map((side) => median(figures[`${side} ${batch}`]!));
    return {
      batch: String(batch),
      'server.infer rows/s': Math.round(served!),
      'bare evaluator rows/s': Math.round(evaluator!),
      'lightgbm.predict rows/s': Math.round(reference!),
      'lightgbm 1 thread rows/s': Math.round(oneThread!),
      'server / lightgbm': (median(figures[`server ${batch}`]!.map((s, i) => s / figures[`lightgbm ${batch}`]![i]!))).toFixed(2),
    };
  });
  console.log(`${lightgbm!.trees} trees, ${FEATURES} features, medians of ${ROUNDS} alternating rounds`);
  table(rows);
  await server.stop();
} finally {
  await rm(directory, { recursive: true, force: true });
}
