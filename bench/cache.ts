/**
 * The response cache (issue 9): on the ONNX MLP (about 1 ms a batch of 64; here batch 1),
 * p50/p99 of a miss (every request new: lookup, run, insertion) against a hit (the
 * same request again), with the local cache and, where redis-server is installed, with
 * Redis on loopback. Rounds alternate; medians over rounds.
 * Run: npx -y pnpm@10.34.9 bench:cache
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InferenceServer, type ResponseCacheOptions } from '@tritium/core';
import { onnxBackend } from '@tritium/backend-onnx';
import { redisMissing, startRedis } from '../packages/core/test/helpers/redis-server.js';
import { measureLatency, median, table } from './measure.js';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const CALLS = 2000;
const WIDTH = 256;
const MODELS = fileURLToPath(new URL('../packages/backend-onnx/models/', import.meta.url));

const repository = await mkdtemp(join(tmpdir(), 'tritium-bench-cache-'));
await mkdir(join(repository, 'mlp', '1'), { recursive: true });
await cp(join(MODELS, 'mlp.onnx'), join(repository, 'mlp', '1', 'model.onnx'));
await writeFile(
  join(repository, 'mlp', 'config.pbtxt'),
  `platform: "onnxruntime_onnx"
max_batch_size: 64
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ ${WIDTH} ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ ${WIDTH} ] }
response_cache { enable: true }`,
);

let redis: Awaited<ReturnType<typeof startRedis>> | undefined;
const caches: Array<[string, ResponseCacheOptions]> = [['local', { type: 'local', sizeBytes: 256 << 20 }]];
if (redisMissing) console.log(`${redisMissing}: the Redis rows are skipped`);
else {
  redis = await startRedis();
  caches.push(['redis', { type: 'redis', port: redis.port, timeoutMs: 1000 }]);
}

try {
  const rows: Array<Record<string, string | number>> = [];
  for (const [name, responseCache] of caches) {
    const server = await InferenceServer.start({ modelRepository: repository, backends: [onnxBackend()], responseCache });
    let counter = 0;
    const request = (fresh: boolean) => {
      const data = new Float32Array(WIDTH).fill(0.5);
      if (fresh) data[0] = ++counter; // a key never seen: a miss
      return server.infer('mlp', { inputs: { INPUT0: { datatype: 'FP32', shape: [1, WIDTH], data } } });
    };
    await request(false);
    const results: Record<'miss' | 'hit', Array<{ p50: number; p99: number }>> = { miss: [], hit: [] };
    for (let round = 0; round < ROUNDS; round++) {
      results.miss.push(await measureLatency(() => request(true), CALLS, 1));
      results.hit.push(await measureLatency(() => request(false), CALLS, 1));
    }
    for (const kind of ['miss', 'hit'] as const) {
      rows.push({ cache: name, request: kind, 'p50 µs': median(results[kind].map((r) => r.p50)), 'p99 µs': median(results[kind].map((r) => r.p99)) });
    }
    rows.push({ cache: name, request: 'hit / miss (p50)', 'p50 µs': median(results.hit.map((r, i) => r.p50 / results.miss[i]!.p50)), 'p99 µs': '' });
    await server.stop();
  }
  table(rows);
} finally {
  redis?.process.kill('SIGKILL');
  await rm(repository, { recursive: true, force: true });
}
