/**
 * Batching, measured (issue 7): all in one process, baselines in the same run.
 * 1. An MLP (about 1 ms per batch of 64), 64 concurrent callers sending batch-1
 *    requests: the default scheduler against dynamic batching, in alternating rounds
 *    (requests/s, p50/p99, mean batch size); and the per-sample cost against raw
 *    onnxruntime-node's own batch-64 run.
 * 2. Configured vs achieved queue delay (100 µs, 1 ms, 10 ms): a lone request waits
 *    for the delay, since no preferred batch size is reached; its queue time comes
 *    from the statistics.
 * 3. 256 concurrent sequences × 20 steps on a stateful model (implicit state):
 *    direct vs oldest, in alternating rounds.
 * Run: npx -y pnpm@10.34.9 bench:batching
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { InferenceServer } from '@tritium/core';
import { onnxBackend } from '@tritium/backend-onnx';
import { measureLatency, median, table } from './measure.js';

const MODELS = fileURLToPath(new URL('../packages/backend-onnx/models/', import.meta.url));
const ROUNDS = Number(process.env.ROUNDS ?? 5);
const CALLERS = 64;
const MLP_WIDTH = 256;

const mlpConfig = (scheduling: string) => `platform: "onnxruntime_onnx"
max_batch_size: 64
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ ${MLP_WIDTH} ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ ${MLP_WIDTH} ] }
${scheduling}`;
const tinyConfig = (delayUs: number) => `platform: "onnxruntime_onnx"
max_batch_size: 64
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] }
instance_group { count: 1 kind: KIND_CPU }
parameters { key: "execution_thread" value { string_value: "inline" } }
dynamic_batching { max_queue_delay_microseconds: ${delayUs} }`;
const sequenceConfig = (strategy: string) => `platform: "onnxruntime_onnx"
max_batch_size: 64
input { name: "INPUT" data_type: TYPE_FP32 dims: [ 1 ] }
output { name: "OUTPUT" data_type: TYPE_FP32 dims: [ 1 ] }
sequence_batching {
  ${strategy}
  state { input_name: "INPUT_STATE" output_name: "OUTPUT_STATE" data_type: TYPE_FP32 dims: [ 1 ]
    initial_state { data_type: TYPE_FP32 dims: [ 1 ] zero_data: true name: "zero" } }
}`;

const DELAYS_US = [100, 1000, 10000];
const entries: Record<string, { file: string; config: string }> = {
  mlp_default: { file: 'mlp', config: mlpConfig('') },
  mlp_dynamic: { file: 'mlp', config: mlpConfig('dynamic_batching { }') },
  seq_direct: { file: 'accumulator', config: sequenceConfig('direct { }') },
  seq_oldest: { file: 'accumulator', config: sequenceConfig('oldest { max_candidate_sequences: 128 }') },
  ...Object.fromEntries(DELAYS_US.map((delay) => [`tiny_delay_${delay}`, { file: 'tiny', config: tinyConfig(delay) }])),
};

const repository = await mkdtemp(join(tmpdir(), 'tritium-bench-batching-'));
for (const [name, { file, config }] of Object.entries(entries)) {
  await mkdir(join(repository, name, '1'), { recursive: true });
  await cp(join(MODELS, `${file}.onnx`), join(repository, name, '1', 'model.onnx'));
  await writeFile(join(repository, name, 'config.pbtxt'), config);
}
const server = await InferenceServer.start({ modelRepository: repository, backends: [onnxBackend()] });
const notReady = (await server.repositoryIndex()).filter((e) => e.state !== 'READY');
if (notReady.length) throw new Error(`models failed to load: ${JSON.stringify(notReady)}`);

const counts = (model: string) => {
  const stats = server.statistics(model).model_stats[0]!;
  return { inferences: stats.inference_count, executions: stats.execution_count, queueNs: stats.inference_stats.queue.ns, queued: stats.inference_stats.queue.count };
};

// 1. MLP: default scheduler vs dynamic batching, 64 callers of batch 1.
const row = Float32Array.from({ length: MLP_WIDTH }, (_, i) => (i % 7) / 7);
const mlpOnce = (model: string) => () => server.infer(model, { inputs: { INPUT0: { datatype: 'FP32', shape: [1, MLP_WIDTH], data: row } } });
const mlpRound = async (model: string, calls: number) => {
  const before = counts(model);
  const result = await measureLatency(mlpOnce(model), calls, CALLERS);
  const after = counts(model);
  return { ...result, meanBatch: (after.inferences - before.inferences) / (after.executions - before.executions) };
};
await mlpRound('mlp_default', 512);
await mlpRound('mlp_dynamic', 512);
const rounds: Record<string, Array<Awaited<ReturnType<typeof mlpRound>>>> = { mlp_default: [], mlp_dynamic: [] };
for (let i = 0; i < ROUNDS; i++) {
  rounds.mlp_default!.push(await mlpRound('mlp_default', 2048));
  rounds.mlp_dynamic!.push(await mlpRound('mlp_dynamic', 8192));
}
const summary = (model: string) => {
  const r = rounds[model]!;
  return {
    model,
    'requests/s': median(r.map((x) => x.requestsPerSecond)),
    'p50 ms': median(r.map((x) => x.p50)) / 1000,
    'p99 ms': median(r.map((x) => x.p99)) / 1000,
    'mean batch': median(r.map((x) => x.meanBatch)),
  };
};
console.log(`\n1. MLP, ${CALLERS} callers of batch 1 (medians of ${ROUNDS} alternating rounds)`);
table([summary('mlp_default'), summary('mlp_dynamic')]);
const throughput = median(rounds.mlp_dynamic!.map((d, i) => d.requestsPerSecond / rounds.mlp_default![i]!.requestsPerSecond));
const p99 = median(rounds.mlp_dynamic!.map((d, i) => d.p99 / rounds.mlp_default![i]!.p99));
console.log(`dynamic / default: throughput ${throughput.toFixed(2)}x (target >= 3x), p99 ${p99.toFixed(2)}x (target <= 1x)`);

// Raw onnxruntime-node at batch 64, default session options, in this thread.
const session = await ort.InferenceSession.create(join(MODELS, 'mlp.onnx'));
const batch64 = new ort.Tensor('float32', Float32Array.from({ length: 64 * MLP_WIDTH }, (_, i) => (i % 7) / 7), [64, MLP_WIDTH]);
for (let i = 0; i < 20; i++) await session.run({ INPUT0: batch64 });
const rawRounds: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  const start = performance.now();
  for (let k = 0; k < 100; k++) await session.run({ INPUT0: batch64 });
  rawRounds.push(((performance.now() - start) * 1000) / 100);
}
await session.release();
const rawPerSample = median(rawRounds) / 64;
const dynamicPerSample = 1e6 / summary('mlp_dynamic')['requests/s'];
console.log(`per sample: raw onnxruntime-node batch 64 ${rawPerSample.toFixed(2)} µs (${median(rawRounds).toFixed(0)} µs per batch), dynamic batching ${dynamicPerSample.toFixed(2)} µs: ${(dynamicPerSample / rawPerSample).toFixed(2)}x (moonshot <= 1.2x)`);

// 2. Queue delay: a lone request waits for the configured delay.
const one = new Float32Array([1]);
const delayRows = [];
for (const delay of DELAYS_US) {
  const model = `tiny_delay_${delay}`;
  const calls = delay >= 10000 ? 50 : 200;
  const before = counts(model);
  for (let i = 0; i < calls; i++) await server.infer(model, { inputs: { INPUT0: { datatype: 'FP32', shape: [1, 1], data: one } } });
  const after = counts(model);
  const achieved = (after.queueNs - before.queueNs) / (after.queued - before.queued) / 1000;
  delayRows.push({ 'configured µs': delay, 'achieved µs (mean queue time)': achieved, 'over by µs': achieved - delay, ratio: achieved / delay });
}
console.log('\n2. Configured vs achieved queue delay (a lone request, tiny model inline)');
table(delayRows);

// 3. 256 sequences × 20 steps: direct vs oldest.
const SEQUENCES = 256;
const STEPS = 20;
let nextId = 1;
const runSequences = async (model: string) => {
  const start = performance.now();
  await Promise.all(
    Array.from({ length: SEQUENCES }, async () => {
      const id = nextId++;
      let sum = 0;
      for (let step = 1; step <= STEPS; step++) {
        const response = await server.infer(model, {
          inputs: { INPUT: { datatype: 'FP32', shape: [1, 1], data: one } },
          sequence: { id, start: step === 1, end: step === STEPS },
        });
        sum = (response.outputs.OUTPUT!.data as Float32Array)[0]!;
      }
      if (sum !== STEPS) throw new Error(`${model}: sequence ${id} summed to ${sum}, expected ${STEPS}`);
    }),
  );
  return (SEQUENCES * STEPS) / ((performance.now() - start) / 1000);
};
await runSequences('seq_direct');
await runSequences('seq_oldest');
const direct: number[] = [];
const oldest: number[] = [];
for (let i = 0; i < ROUNDS; i++) {
  direct.push(await runSequences('seq_direct'));
  oldest.push(await runSequences('seq_oldest'));
}
const batchOf = (model: string) => counts(model).inferences / counts(model).executions;
console.log(`\n3. ${SEQUENCES} sequences × ${STEPS} steps, accumulator with implicit state (medians of ${ROUNDS} alternating rounds)`);
table([
  { strategy: 'direct', 'requests/s': median(direct), 'mean batch': batchOf('seq_direct') },
  { strategy: 'oldest', 'requests/s': median(oldest), 'mean batch': batchOf('seq_oldest') },
]);

await server.stop();
await rm(repository, { recursive: true, force: true });
