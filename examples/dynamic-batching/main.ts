/**
 * Dynamic batching: the same MLP served twice, once with the default scheduler (one
 * request per execution) and once with `dynamic_batching`, which gathers concurrent
 * requests into one execution. 64 in-process callers send batch-1 requests to each.
 * Run from the repository root: npx -y pnpm@10.34.9 example:dynamic-batching
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { InferenceServer } from '@tritium/core';

const MODELS = fileURLToPath(new URL('../../packages/backend-onnx/models/', import.meta.url));
const CALLERS = 64;
const DURATION_MS = 2000;
const WIDTH = 256; // mlp.onnx: INPUT0 FP32 [batch,256] -> OUTPUT0 FP32 [batch,256]

// Full configs (inputs and outputs given), so the ONNX backend's auto-complete adds nothing:
// mlp_plain keeps the default scheduler, mlp_batched gets the dynamic batcher.
const configOf = (scheduler: string) => `platform: "onnxruntime_onnx"
max_batch_size: 64
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ ${WIDTH} ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ ${WIDTH} ] }
${scheduler}
`;
const models = {
  mlp_plain: configOf(''),
  mlp_batched: configOf('dynamic_batching { max_queue_delay_microseconds: 500 }'),
};

const repository = await mkdtemp(join(tmpdir(), 'tritium-dynamic-batching-'));
for (const [name, config] of Object.entries(models)) {
  await mkdir(join(repository, name, '1'), { recursive: true });
  await cp(join(MODELS, 'mlp.onnx'), join(repository, name, '1', 'model.onnx'));
  await writeFile(join(repository, name, 'config.pbtxt'), config);
}

const server = await InferenceServer.start({ modelRepository: repository });
try {
  for (const entry of await server.repositoryIndex()) {
    if (entry.state !== 'READY') throw new Error(`${entry.name}: ${entry.state} ${entry.reason ?? ''}`);
    const config = await server.modelConfig(entry.name);
    const batching = config.dynamic_batching;
    console.log(`${entry.name}: READY, max_batch_size ${config.max_batch_size}, ${batching ? `dynamic_batching (max_queue_delay_microseconds ${batching.max_queue_delay_microseconds})` : 'default scheduler (no dynamic_batching)'}`);
  }

  // Each caller sends its own row; its answer, from one lone request, is what every response
  // it gets must match (batching must not mix rows up; a batched Gemm may differ from a
  // batch-1 one in the last bits, hence the tolerance).
  const requestOf = (row: Float32Array) => ({ inputs: { INPUT0: { datatype: 'FP32' as const, shape: [1, WIDTH], data: row } } });
  const rows = Array.from({ length: CALLERS }, (_, c) => Float32Array.from({ length: WIDTH }, (_, i) => Math.sin(i + c * WIDTH) / 4));
  const references: Float32Array[] = [];
  for (const row of rows) references.push((await server.infer('mlp_plain', requestOf(row))).outputs.OUTPUT0!.data as Float32Array);
  const matches = (data: ArrayLike<unknown>, reference: Float32Array) => {
    for (let i = 0; i < WIDTH; i++) if (Math.abs((data[i] as number) - reference[i]!) > 1e-4 * (1 + Math.abs(reference[i]!))) return false;
    return true;
  };

  /** CALLERS callers, each sending one batch-1 request after another until the time is up. */
  async function load(model: string) {
    const latencies: number[] = [];
    const before = server.statistics(model).model_stats[0]!;
    const started = performance.now();
    const until = started + DURATION_MS;
    const caller = async (c: number) => {
      const request = requestOf(rows[c]!);
      while (performance.now() < until) {
        const t0 = performance.now();
        const response = await server.infer(model, request);
        latencies.push(performance.now() - t0);
        const output = response.outputs.OUTPUT0;
        if (!output || output.datatype !== 'FP32' || output.shape.join(',') !== `1,${WIDTH}` || output.data.length !== WIDTH || !matches(output.data, references[c]!)) {
          throw new Error(`${model}: unexpected output ${JSON.stringify({ datatype: output?.datatype, shape: output?.shape })}`);
        }
      }
    };
    await Promise.all(Array.from({ length: CALLERS }, (_, c) => caller(c)));
    const seconds = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const at = (q: number) => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
    // inference_count / execution_count over this run: how many requests each execution served.
    const after = server.statistics(model).model_stats[0]!;
    const inferences = after.inference_count - before.inference_count;
    const executions = after.execution_count - before.execution_count;
    const result = {
      requests: latencies.length,
      perSecond: latencies.length / seconds,
      p50: at(0.5),
      p99: at(0.99),
      meanBatch: inferences / executions,
    };
    console.log(
      `${model.padEnd(11)}: ${result.requests} requests, ${result.perSecond.toFixed(0)} req/s, ` +
        `p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, ` +
        `mean batch size ${result.meanBatch.toFixed(2)} (${inferences} inferences in ${executions} executions), all ${result.requests} outputs FP32 [1,${WIDTH}] each equal to its row's lone answer`,
    );
    return result;
  }

  // A short warm-up for each, so neither pays for first-run allocation in the timed run.
  await Promise.all(rows.map((row) => Promise.all([server.infer('mlp_plain', requestOf(row)), server.infer('mlp_batched', requestOf(row))])));

  console.log(`\n${CALLERS} concurrent callers, batch-1 requests, ${DURATION_MS / 1000} s each:`);
  const plain = await load('mlp_plain');
  const batched = await load('mlp_batched');
  console.log(`\nspeed-up with dynamic batching: ${(batched.perSecond / plain.perSecond).toFixed(2)}x requests/s`);
} finally {
  await server.stop();
  await rm(repository, { recursive: true, force: true });
}
