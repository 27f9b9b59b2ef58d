/**
 * S3 model repositories (issue 24): how long InferenceServer.start() takes to serve a
 * repository of 20 small ONNX models read from S3 (s3rver on loopback, in a child
 * process), cold (an empty cache: every file downloaded) and warm (a restart on the
 * cache the cold start filled), against the same repository on disk. Twice: on the ONNX
 * backend (what a user sees), and on a no-op backend that reads no file (the
 * repository's own cost; the files are still downloaded). Rounds alternate disk, cold
 * and warm; medians and ranges over rounds, ratios per round.
 * Run: npx -y pnpm@10.34.9 bench:object-storage
 */
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { InferenceServer } from '@tritium/core';
import type { Backend } from '@tritium/core/backend';
import { onnxBackend } from '@tritium/backend-onnx';
import { S3_CREDENTIALS, TestS3Server } from '../packages/core/test/helpers/s3-server.js';
import { alternateRounds, formatSpread, ratioSpread, spread, table } from './measure.js';
import { noopBackend } from './noop-backend.js';

const ROUNDS = Number(process.env.ROUNDS ?? 7);
const MODELS = 20;
const TINY = fileURLToPath(new URL('../packages/backend-onnx/models/tiny.onnx', import.meta.url));
const BACKENDS: ReadonlyArray<[string, () => Backend]> = [['onnxruntime', onnxBackend], ['noop', noopBackend]];

process.env.AWS_ACCESS_KEY_ID = S3_CREDENTIALS.accessKeyId;
process.env.AWS_SECRET_ACCESS_KEY = S3_CREDENTIALS.secretAccessKey;

const work = await mkdtemp(join(tmpdir(), 'tritium-bench-s3-'));
const s3 = await TestS3Server.startInChild();

/** 20 copies of the tiny model (x + 1) for `backend`, on disk. */
async function writeRepository(backend: string): Promise<string> {
  const repository = join(work, backend);
  for (let i = 0; i < MODELS; i++) {
    const model = join(repository, `tiny_${String(i).padStart(2, '0')}`);
    await mkdir(join(model, '1'), { recursive: true });
    await writeFile(
      join(model, 'config.pbtxt'),
      `backend: "${backend}"
max_batch_size: 8
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] }
`,
    );
    await copyFile(TINY, join(model, '1', 'model.onnx'));
  }
  return repository;
}

/** Seconds from start() to every model ready; the server is stopped after. */
async function startUp(modelRepository: string, backend: () => Backend, cacheDirectory?: string): Promise<number> {
  const began = performance.now();
  const server = await InferenceServer.start({ modelRepository, backends: [backend()], continueOnLoadError: false, objectStorage: { cacheDirectory } });
  const seconds = (performance.now() - began) / 1000;
  await server.stop();
  return seconds;
}

try {
  const rows: Array<Record<string, string>> = [];
  for (const [name, backend] of BACKENDS) {
    const repository = await writeRepository(name);
    await s3.createBucket(`bench-${name}`);
    await s3.upload(repository, `bench-${name}`, 'models/');
    const url = `s3://${s3.host}/bench-${name}/models`;
    let cache: string | undefined;
    const times = await alternateRounds(
      {
        disk: () => startUp(repository, backend),
        cold: async () => {
          if (cache) await rm(cache, { recursive: true, force: true });
          cache = await mkdtemp(join(work, 'cache-'));
          return startUp(url, backend, cache);
        },
        warm: () => startUp(url, backend, cache),
      },
      ROUNDS,
    );
    const ms = (values: number[]) => formatSpread(spread(values.map((s) => s * 1000)), 0);
    rows.push(
      { backend: name, repository: `disk, ${MODELS} models`, 'start ms': ms(times.disk), '÷ disk': '' },
      { backend: name, repository: 'S3, cold cache', 'start ms': ms(times.cold), '÷ disk': formatSpread(ratioSpread(times.cold, times.disk)) },
      { backend: name, repository: 'S3, warm cache (restart)', 'start ms': ms(times.warm), '÷ disk': formatSpread(ratioSpread(times.warm, times.disk)) },
    );
  }
  table(rows);
} finally {
  await s3.close();
  await rm(work, { recursive: true, force: true });
}
