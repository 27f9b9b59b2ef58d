/**
 * Where ONNX runs happen, measured (issue 6): all in one process, baselines in the same run.
 * 1. The bare worker handoff: a postMessage round trip and a SharedArrayBuffer +
 *    Atomics.waitAsync round trip to an echoing worker.
 * 2. Tiny model at batch 1: server.infer() inline against raw session.run, and on a
 *    worker against the bare postMessage round trip; what "auto" picks for tiny and MLP.
 * 3. Event-loop delay (monitorEventLoopDelay) under sustained MLP load: idle, inline
 *    (every run on the loop, as before issue 6), and the default configuration.
 * 4. MLP at batch 64, one intra-op thread per instance: 1 vs 2 instances; the default
 *    configuration against raw onnxruntime-node with its default threads.
 * 5. Memory: 100 load/unload cycles of the MLP under light traffic; RSS with 4 workers
 *    loaded and after unloading them.
 * Run: npx -y pnpm@10.34.9 bench:threads
 */
import { DETACHED } from '../packages/core/test/helpers/detached.js';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import * as ort from 'onnxruntime-node';
import { InferenceServer, validateModelConfig } from '@tritium/core';
import type { BackendInstance } from '@tritium/core/backend';
import { onnxBackend } from '@tritium/backend-onnx';
import { compareInterleaved, loopDelayDuring, measureLatency, median, table } from './measure.js';

const MODELS = fileURLToPath(new URL('../packages/backend-onnx/models/', import.meta.url));
const width = { tiny: 1, mlp: 256 } as const;
type ModelFile = keyof typeof width;

const param = (key: string, value: string | number) => `parameters { key: "${key}" value { string_value: "${value}" } }`;
/** A config: `count` instances (0: the default), `thread` (execution_thread), `threads` intra-op threads (0: the default). */
const configOf = (file: ModelFile, options: { count?: number; thread?: string; threads?: number }) => `platform: "onnxruntime_onnx"
max_batch_size: 64
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ ${width[file]} ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ ${width[file]} ] }
${options.count ? `instance_group { count: ${options.count} kind: KIND_CPU }` : ''}
${options.thread ? param('execution_thread', options.thread) : ''}
${options.threads ? param('intra_op_thread_count', options.threads) : ''}
`;

const entries: Record<string, { file: ModelFile; config: string }> = {
  tiny_inline: { file: 'tiny', config: configOf('tiny', { count: 1, thread: 'inline' }) },
  tiny_worker: { file: 'tiny', config: configOf('tiny', { count: 1, thread: 'worker' }) },
  mlp_inline: { file: 'mlp', config: configOf('mlp', { count: 1, thread: 'inline' }) },
  mlp_1t_x1: { file: 'mlp', config: configOf('mlp', { count: 1, thread: 'worker', threads: 1 }) },
  mlp_1t_x2: { file: 'mlp', config: configOf('mlp', { count: 2, thread: 'worker', threads: 1 }) },
  mlp_default: { file: 'mlp', config: configOf('mlp', {}) },
  mlp_x4: { file: 'mlp', config: configOf('mlp', { count: 4, thread: 'worker' }) },
  mlp_churn: { file: 'mlp', config: configOf('mlp', {}) },
};

const repository = await mkdtemp(join(tmpdir(), 'tritium-bench-threads-'));
for (const [name, { file, config }] of Object.entries(entries)) {
  await mkdir(join(repository, name, '1'), { recursive: true });
  await cp(join(MODELS, `${file}.onnx`), join(repository, name, '1', 'model.onnx'));
  await writeFile(join(repository, name, 'config.pbtxt'), config);
}
const startup = Object.keys(entries).filter((name) => name !== 'mlp_x4' && name !== 'mlp_churn');
const server = await InferenceServer.start({ modelRepository: repository, modelControlMode: 'explicit', startupModels: startup, backends: [onnxBackend()] });
const notReady = (await server.repositoryIndex()).filter((e) => startup.includes(e.name) && e.state !== 'READY');
if (notReady.length) throw new Error(`models failed to load: ${JSON.stringify(notReady)}`);

const batchOf = (file: ModelFile, batch: number) => Float32Array.from({ length: batch * width[file] }, (_, i) => (i % 7) / 7);
const inferOnce = (model: string, file: ModelFile, batch: number) => {
  const data = batchOf(file, batch);
  return () => server.infer(model, { inputs: { INPUT0: { datatype: 'FP32', shape: [batch, width[file]], data } } });
};

// 1. The bare handoff.
const echo = new Worker(`require('node:worker_threads').parentPort.on('message', function (m) { this.postMessage(m); });`, { eval: true });
const postMessageTrip = () =>
  new Promise<void>((resolve) => {
    echo.once('message', () => resolve());
    echo.postMessage({ id: 1, feeds: { INPUT0: { type: 'float32', data: new Float32Array(1), dims: [1, 1] } } });
  });
const flags = new Int32Array(new SharedArrayBuffer(8));
// Node 20 has Atomics.waitAsync; TypeScript's ES2022 lib does not declare it.
const { waitAsync } = Atomics as unknown as { waitAsync(on: Int32Array, index: number, value: number): { async: boolean; value: Promise<string> | string } };
const sharedTrip = async () => {
  Atomics.store(flags, 0, 1);
  Atomics.notify(flags, 0);
  const { async, value } = waitAsync(flags, 1, 0);
  if (async) await value;
  Atomics.store(flags, 1, 0);
};
// The shared-memory echo parks in Atomics.wait (it answers nothing else), woken by a flag.
const waiter = new Worker(
  `const { parentPort } = require('node:worker_threads');
   parentPort.once('message', (shared) => {
     const flag = new Int32Array(shared);
     for (;;) { Atomics.wait(flag, 0, 0); Atomics.store(flag, 0, 0); Atomics.store(flag, 1, 1); Atomics.notify(flag, 1); }
   });`,
  { eval: true },
);
waiter.postMessage(flags.buffer);
const trips = await compareInterleaved(postMessageTrip, sharedTrip, 2_000, 20);
await waiter.terminate();
console.log('\n1. bare worker round trip (sequential; 20 alternating rounds; medians)');
table([{ 'postMessage µs': trips.baseUs, 'SharedArrayBuffer + Atomics.waitAsync µs': trips.candidateUs, 'SAB/postMessage': trips.ratio }]);

// 2. Tiny model at batch 1: inline against raw session.run, worker against the bare round trip.
const tinySession = await ort.InferenceSession.create(join(MODELS, 'tiny.onnx'));
const tinyData = batchOf('tiny', 1);
const rawTiny = () => tinySession.run({ INPUT0: new ort.Tensor('float32', tinyData, [1, 1]) });
const inline = await compareInterleaved(rawTiny, inferOnce('tiny_inline', 'tiny', 1), 2_000, 40);
const worker = await compareInterleaved(postMessageTrip, inferOnce('tiny_worker', 'tiny', 1), 2_000, 40);
await tinySession.release();
await echo.terminate();
console.log('\n2. tiny model, batch 1 (sequential; 40 alternating rounds; medians)');
table([
  { mode: 'inline', baseline: 'raw session.run', 'baseline µs': inline.baseUs, 'server.infer() µs': inline.candidateUs, 'added µs': inline.addedUs },
  { mode: 'worker', baseline: 'bare postMessage round trip', 'baseline µs': worker.baseUs, 'server.infer() µs': worker.candidateUs, 'added µs': worker.addedUs },
]);
// The worker's overhead over a raw run, against the bare handoff: the target is at most 10 µs above it.
console.log(`   worker mode: ${(worker.candidateUs - inline.baseUs).toFixed(1)} µs over raw session.run, ${(worker.candidateUs - inline.baseUs - worker.baseUs).toFixed(1)} µs above the bare round trip`);
console.log(`   auto picks: tiny ${await autoChoice('tiny', 1)}, mlp at batch 64 ${await autoChoice('mlp', 64)}`);

// 3. Event-loop delay under sustained MLP load (8 callers), alternating: the loop left
// idle (the histogram's floor: it reports whole timer intervals, so 1 ms is no delay),
// inline (where every run used to be), and the default configuration (2 workers).
const delays: Record<string, { p50: number[]; p99: number[]; max: number[]; rate: number[] }> = {};
const idle = () => new Promise((resolve) => setTimeout(resolve, 600));
for (let round = 0; round < 3; round++) {
  for (const [name, load] of [
    ['idle loop (no requests)', idle],
    ['mlp_inline', () => measureLatency(inferOnce('mlp_inline', 'mlp', 64), 600, 8)],
    ['mlp_default (2 workers)', () => measureLatency(inferOnce('mlp_default', 'mlp', 64), 600, 8)],
  ] as const) {
    const { p50, p99, max, seconds } = await loopDelayDuring(load);
    const row = (delays[name] ??= { p50: [], p99: [], max: [], rate: [] });
    row.p50.push(p50);
    row.p99.push(p99);
    row.max.push(max);
    row.rate.push(load === idle ? 0 : 600 / seconds);
  }
}
console.log('\n3. event-loop delay (1 ms timer intervals) during sustained MLP load (batch 64, 8 callers, 600 requests; 3 alternating rounds; medians)');
table(
  Object.entries(delays).map(([model, d]) => ({
    run: model,
    'interval p50 ms': median(d.p50),
    'p99 ms': median(d.p99),
    'max ms': median(d.max),
    'req/s': median(d.rate),
  })),
);

// 4. Parallel instances, and the default configuration against raw onnxruntime-node.
const mlpSession = await ort.InferenceSession.create(join(MODELS, 'mlp.onnx'));
const mlpData = batchOf('mlp', 64);
const rawMlp = () => mlpSession.run({ INPUT0: new ort.Tensor('float32', mlpData, [64, 256]) });
const rates: Record<string, number[]> = {};
for (let round = 0; round < 5; round++) {
  const runs: Array<[string, () => Promise<unknown>]> = [
    ['1 instance, 1 thread', inferOnce('mlp_1t_x1', 'mlp', 64)],
    ['2 instances, 1 thread each', inferOnce('mlp_1t_x2', 'mlp', 64)],
    ['raw session.run, default threads', rawMlp],
    ['server, default configuration', inferOnce('mlp_default', 'mlp', 64)],
  ];
  for (const [name, once] of runs) (rates[name] ??= []).push((await measureLatency(once, 400, 8)).requestsPerSecond);
}
await mlpSession.release();
const rate = (name: string) => median(rates[name]!);
console.log('\n4. MLP batch 64, 8 callers (5 alternating rounds; median req/s)');
table(Object.keys(rates).map((name) => ({ run: name, 'req/s': rate(name) })));
console.log(`   2 instances / 1 instance: ${(rate('2 instances, 1 thread each') / rate('1 instance, 1 thread')).toFixed(2)}×`);
console.log(`   default configuration / raw onnxruntime-node: ${(rate('server, default configuration') / rate('raw session.run, default threads')).toFixed(2)}×`);

// 5. Memory across model churn under light traffic, and what unloading 4 workers gives back.
const rssMb = () => process.memoryUsage().rss / 2 ** 20;
let traffic = true;
const light = (async () => {
  const once = inferOnce('tiny_worker', 'tiny', 1);
  while (traffic) {
    await once();
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
})();
const cycle = async (model: string) => {
  await server.loadModel(model);
  await inferOnce(model, 'mlp', 64)();
  await server.unloadModel(model);
};
for (let i = 0; i < 5; i++) await cycle('mlp_churn');
const churnStart = rssMb();
for (let i = 0; i < 100; i++) await cycle('mlp_churn');
const churnEnd = rssMb();
const beforeLoad = rssMb();
await server.loadModel('mlp_x4');
await Promise.all([0, 1, 2, 3].map(() => inferOnce('mlp_x4', 'mlp', 64)()));
const loaded = rssMb();
await server.unloadModel('mlp_x4');
await new Promise((resolve) => setTimeout(resolve, 200));
const unloaded = rssMb();
traffic = false;
await light;
console.log('\n5. memory (RSS, MB)');
table([
  { what: '100 load/unload cycles of the MLP (2 workers), light traffic', before: churnStart, after: churnEnd, growth: churnEnd - churnStart },
  { what: 'the MLP with 4 workers loaded, then unloaded', before: beforeLoad, after: loaded, growth: loaded - beforeLoad },
  { what: '  ... after unloading', before: loaded, after: unloaded, growth: unloaded - loaded },
]);

await server.stop();
await rm(repository, { recursive: true, force: true });

/** Where "auto" runs a model after 40 executions at `batch`: read off the backend's instance. */
async function autoChoice(file: ModelFile, batch: number): Promise<string> {
  const backend = onnxBackend();
  const directory = join(repository, `auto_${file}`);
  await mkdir(join(directory, '1'), { recursive: true });
  await cp(join(MODELS, `${file}.onnx`), join(directory, '1', 'model.onnx'));
  const config = validateModelConfig({ name: `auto_${file}`, backend: 'onnxruntime', max_batch_size: 64, input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [width[file]] }], output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [width[file]] }] });
  const model = await backend.createModel({ name: `auto_${file}`, config, modelDirectory: directory, versionDirectory: join(directory, '1'), modelPath: join(directory, '1', 'model.onnx'), version: 1, ...DETACHED });
  const instance = (await model.createInstance({ name: `auto_${file}_0`, kind: 'KIND_CPU', health: { recovering() {}, restored() {}, failed() {} } })) as BackendInstance & { thread: string };
  const data = batchOf(file, batch);
  const request = { id: 'auto', modelName: `auto_${file}`, modelVersion: 1, inputs: { INPUT0: { datatype: 'FP32' as const, shape: [batch, width[file]], data } }, requestedOutputs: ['OUTPUT0'], parameters: {}, batchSize: batch, priority: 0, timeoutMicroseconds: 0, sequence: undefined, isCancelled: false, onCancel: () => () => {}, response: { send() {}, close() {}, fail() {} } };
  for (let i = 0; i < 40; i++) await instance.execute([request]);
  await new Promise((resolve) => setTimeout(resolve, 100));
  const thread = instance.thread;
  await instance.finalize?.();
  await model.finalize?.();
  return thread;
}
