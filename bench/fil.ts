/**
 * The FIL backend against LightGBM's own predict() in Python: a 500-tree binary
 * LightGBM model on 32 features, rows/s at batch 1 and batch 1024, through
 * server.infer() and the bare evaluator (no server), medians of 5 rounds.
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
const directory = await mkdtemp(join(tmpdir(), 'tritium-bench-fil-'));
try {
  const script = fileURLToPath(new URL('./fil_reference.py', import.meta.url));
  const { stdout } = await promisify(execFile)('python3', [script, directory], { timeout: 300_000 });
  const lightgbm = JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<'batch1' | 'batch1024' | 'batch1_1thread' | 'batch1024_1thread' | 'trees', number>;
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

  const rows: Array<Record<string, string | number>> = [];
  for (const [batch, calls] of [[1, 3000], [1024, 20]] as const) {
    const data = x.slice(0, batch * FEATURES);
    const viaServer = () => server.infer('forest', { inputs: { input__0: { datatype: 'FP32', shape: [batch, FEATURES], data } } });
    const bare = async () => predict(forest, data, batch);
    const rate = async (once: () => Promise<unknown>) => {
      await measureRate(once, calls);
      const rounds: number[] = [];
      for (let i = 0; i < 5; i++) rounds.push((await measureRate(once, calls)).requestsPerSecond * batch);
      return median(rounds);
    };
    const served = await rate(viaServer);
    const evaluator = await rate(bare);
    const reference = lightgbm[`batch${batch}`];
    const oneThread = lightgbm[`batch${batch}_1thread`];
    rows.push({
      batch: String(batch),
      'server.infer rows/s': Math.round(served),
      'bare evaluator rows/s': Math.round(evaluator),
      'lightgbm.predict rows/s': Math.round(reference),
      'lightgbm 1 thread rows/s': Math.round(oneThread),
      'server / lightgbm': (served / reference).toFixed(2),
    });
  }
  console.log(`${lightgbm.trees} trees, ${FEATURES} features`);
  table(rows);
  await server.stop();
} finally {
  await rm(directory, { recursive: true, force: true });
}
