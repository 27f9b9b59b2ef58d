/**
 * The ONNX backend's figures, all in one process on the same model files:
 * 1. raw onnxruntime-node session.run vs server.infer() (tiny model at batch 1 and 64,
 *    the ~1 ms MLP at batch 64): µs/request, what the server adds, and the ratio;
 * 2. 1, 8 and 64 concurrent callers with 1 and 2 instances: requests/s, p50/p99;
 * 3. onnxruntime-web vs onnxruntime-node through the server.
 * Run: npx -y pnpm@10.34.9 bench:onnx
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { InferenceServer } from '@tritium/core';
import { onnxBackend } from '@tritium/backend-onnx';
import { compareInterleaved, measureLatency, table } from './measure.js';

const MODELS = fileURLToPath(new URL('../packages/backend-onnx/models/', import.meta.url));
const shapes = { tiny: 1, mlp: 256 } as const;
type ModelFile = keyof typeof shapes;

/** A repository entry: which file, how many instances, which runtime, intra-op threads (0: onnxruntime's default). */
type Entry = { file: ModelFile; count: number; runtime: 'node' | 'web'; threads: number };
const entries: Record<string, Entry> = {
  tiny: { file: 'tiny', count: 1, runtime: 'node', threads: 0 },
  tiny_x2: { file: 'tiny', count: 2, runtime: 'node', threads: 0 },
  tiny_web: { file: 'tiny', count: 1, runtime: 'web', threads: 0 },
  mlp: { file: 'mlp', count: 1, runtime: 'node', threads: 0 },
  mlp_1t: { file: 'mlp', count: 1, runtime: 'node', threads: 1 },
  mlp_x2: { file: 'mlp', count: 2, runtime: 'node', threads: 0 },
  mlp_web: { file: 'mlp', count: 1, runtime: 'web', threads: 0 },
};

const repository = await mkdtemp(join(tmpdir(), 'tritium-bench-onnx-'));
for (const [name, { file, count, runtime, threads }] of Object.entries(entries)) {
  await mkdir(join(repository, name, '1'), { recursive: true });
  await cp(join(MODELS, `${file}.onnx`), join(repository, name, '1', 'model.onnx'));
  await writeFile(
    join(repository, name, 'config.pbtxt'),
    `platform: "onnxruntime_onnx"
max_batch_size: 64
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ ${shapes[file]} ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ ${shapes[file]} ] }
instance_group { count: ${count} kind: KIND_CPU }
parameters { key: "runtime" value { string_value: "${runtime}" } }
parameters { key: "intra_op_thread_count" value { string_value: "${threads}" } }
`,
  );
}
const server = await InferenceServer.start({ modelRepository: repository, backends: [onnxBackend()] });
const notReady = (await server.repositoryIndex()).filter((e) => e.state !== 'READY');
if (notReady.length) throw new Error(`models failed to load: ${JSON.stringify(notReady)}`);

const batchOf = (file: ModelFile, batch: number) => Float32Array.from({ length: batch * shapes[file] }, (_, i) => (i % 7) / 7);
const inferOnce = (model: string, file: ModelFile, batch: number) => {
  const data = batchOf(file, batch);
  return () => server.infer(model, { inputs: { INPUT0: { datatype: 'FP32', shape: [batch, shapes[file]], data } } });
};

// 1. Raw session.run vs server.infer(), same model file, same process.
const overhead = [];
for (const [model, batch, calls] of [['tiny', 1, 2_000], ['tiny', 64, 2_000], ['mlp', 64, 50], ['mlp_1t', 64, 30]] as const) {
  const { file, threads } = entries[model]!;
  const session = await ort.InferenceSession.create(join(MODELS, `${file}.onnx`), threads ? { intraOpNumThreads: threads } : {});
  const data = batchOf(file, batch);
  const raw = () => session.run({ INPUT0: new ort.Tensor('float32', data, [batch, shapes[file]]) });
  const result = await compareInterleaved(raw, inferOnce(model, file, batch), calls, 40);
  overhead.push({
    model,
    batch,
    'raw session.run µs': result.baseUs,
    'server.infer() µs': result.candidateUs,
    'added µs': result.addedUs,
    ratio: result.ratio,
  });
  await session.release();
}
console.log('\n1. raw onnxruntime-node session.run vs server.infer() (sequential; 40 alternating rounds; medians).');
console.log('   mlp_1t: both sessions with 1 intra-op thread, so the two sessions\' spinning thread pools do not contend for the 2 cores.');
table(overhead);

// 2. Concurrent callers against 1 and 2 instances.
const concurrency = [];
for (const [file, batch, calls] of [['tiny', 1, 20_000], ['mlp', 64, 1_500]] as const) {
  for (const instances of [1, 2]) {
    const model = instances === 1 ? file : `${file}_x2`;
    for (const callers of [1, 8, 64]) {
      const once = inferOnce(model, file, batch);
      await measureLatency(once, Math.min(calls, 500), callers);
      const result = await measureLatency(once, calls, callers);
      concurrency.push({ model: file, batch, instances, callers, 'req/s': result.requestsPerSecond, 'p50 µs': result.p50, 'p99 µs': result.p99 });
    }
  }
}
console.log('\n2. concurrent callers through server.infer()');
table(concurrency);

// 3. onnxruntime-web (WebAssembly) vs onnxruntime-node, through the server.
const runtimes = [];
for (const [file, batch, calls] of [['tiny', 1, 1_000], ['mlp', 64, 20]] as const) {
  const result = await compareInterleaved(inferOnce(file, file, batch), inferOnce(`${file}_web`, file, batch), calls, 10);
  runtimes.push({ model: file, batch, 'node µs/req': result.baseUs, 'web µs/req': result.candidateUs, 'web/node': result.ratio });
}
console.log('\n3. onnxruntime-web vs onnxruntime-node (server.infer(), sequential; 10 alternating rounds; medians)');
table(runtimes);

await server.stop();
await rm(repository, { recursive: true, force: true });
