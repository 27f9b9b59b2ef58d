/**
 * Quickstart: builds a model repository in a temp directory, serves it in-process and
 * sends a few requests. Run from the repository root: npx -y pnpm@10.34.9 start
 */
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InferenceError, InferenceServer, type ModelStatistics } from '@tritium/core';

const MODELS = fileURLToPath(new URL('../../packages/backend-onnx/models/', import.meta.url));

// 1. A model repository as Triton lays it out: <model>/config.pbtxt and <model>/<version>/model.onnx.
const repository = await mkdtemp(join(tmpdir(), 'tritium-quickstart-'));
async function addModel(name: string, artifact: string, config?: string) {
  await mkdir(join(repository, name, '1'), { recursive: true });
  await cp(join(MODELS, `${artifact}.onnx`), join(repository, name, '1', 'model.onnx'), { recursive: true });
  if (config) await writeFile(join(repository, name, 'config.pbtxt'), config);
}
// Triton's "simple" example: OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1.
await addModel(
  'add_sub',
  'add_sub',
  `platform: "onnxruntime_onnx"
max_batch_size: 8
input [
  { name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] },
  { name: "INPUT1" data_type: TYPE_FP32 dims: [ 16 ] }
]
output [
  { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] },
  { name: "OUTPUT1" data_type: TYPE_FP32 dims: [ 16 ] }
]
`,
);
// No config.pbtxt: the ONNX backend auto-completes it from the model file.
await addModel('echo_text', 'identity_string');
// A ~1 ms MLP, two instances.
await addModel('mlp', 'mlp', 'platform: "onnxruntime_onnx"\nmax_batch_size: 64\ninstance_group { count: 2 kind: KIND_CPU }');

// 2. Serve it. No backend is passed: @tritium/backend-onnx is installed, so it loads on first use.
const server = await InferenceServer.start({ modelRepository: repository });
try {
  console.log('Models:');
  for (const entry of await server.repositoryIndex()) {
    console.log(`  ${entry.name} v${entry.version}: ${entry.state}${entry.reason ? ` (${entry.reason})` : ''}`);
  }

  // 3. Requests.
  const a = Float32Array.from({ length: 16 }, (_, i) => i);
  const b = new Float32Array(16).fill(1);
  const sum = await server.infer('add_sub', {
    inputs: { INPUT0: { datatype: 'FP32', shape: [1, 16], data: a }, INPUT1: { datatype: 'FP32', shape: [1, 16], data: b } },
  });
  console.log('\nadd_sub:');
  console.log(`  INPUT0 + INPUT1 = ${Array.from(sum.outputs.OUTPUT0!.data as Float32Array).join(' ')}`);
  console.log(`  INPUT0 - INPUT1 = ${Array.from(sum.outputs.OUTPUT1!.data as Float32Array).join(' ')}`);

  const config = await server.modelConfig('echo_text');
  const described = config.input.map((i) => `${i.name} ${i.data_type} [${i.dims}]`).join(', ');
  console.log(`\necho_text (auto-completed: max_batch_size ${config.max_batch_size}, inputs ${described}):`);
  const text = await server.infer('echo_text', { inputs: { INPUT0: { datatype: 'BYTES', shape: [1, 2], data: ['hello', 'tritium'] } } });
  console.log(`  ${JSON.stringify(text.outputs.OUTPUT0!.data)}`);

  const rows = 64;
  const batch = Float32Array.from({ length: rows * 256 }, (_, i) => Math.sin(i));
  await Promise.all(
    Array.from({ length: 20 }, () => server.infer('mlp', { inputs: { INPUT0: { datatype: 'FP32', shape: [rows, 256], data: batch } } })),
  );
  console.log(`\nmlp: 20 concurrent requests of ${rows} rows each answered`);

  try {
    await server.infer('add_sub', { inputs: { INPUT0: { datatype: 'FP32', shape: [1, 4], data: new Float32Array(4) } } });
  } catch (error) {
    if (!(error instanceof InferenceError)) throw error;
    console.log(`\nA bad request is refused at the door: ${error.code}: ${error.message}`);
  }

  // 4. Per-model statistics, in the shape of Triton's statistics extension.
  console.log('\nStatistics:');
  const us = (ns: number, count: number) => (count ? (ns / count / 1000).toFixed(1) : '-');
  console.table(
    server.statistics().model_stats.map((s: ModelStatistics) => ({
      model: `${s.name} v${s.version}`,
      inferences: s.inference_count,
      executions: s.execution_count,
      successes: s.inference_stats.success.count,
      failures: s.inference_stats.fail.count,
      'avg queue µs': us(s.inference_stats.queue.ns, s.inference_stats.queue.count),
      'avg compute µs': us(s.inference_stats.compute_infer.ns, s.inference_stats.compute_infer.count),
    })),
  );
} finally {
  await server.stop();
  await rm(repository, { recursive: true, force: true });
}
