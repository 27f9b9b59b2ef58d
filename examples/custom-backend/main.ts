/**
 * Serves a model with a backend written in TypeScript.
 * Run: npx -y pnpm@10.34.9 example:custom-backend
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InferenceError, InferenceServer } from '@tritium/core';
import { softmaxBackend } from './softmax-backend.js';

// A model repository, as Triton lays it out: <model>/config.pbtxt and <model>/<version>/<file>.
const repository = await mkdtemp(join(tmpdir(), 'tritium-example-'));
await mkdir(join(repository, 'softmax', '1'), { recursive: true });
await writeFile(join(repository, 'softmax', '1', 'model.json'), '{}');
await writeFile(
  join(repository, 'softmax', 'config.pbtxt'),
  `backend: "softmax"
max_batch_size: 8
input { name: "INPUT" data_type: TYPE_FP32 dims: [ 4 ] }
output { name: "OUTPUT" data_type: TYPE_FP32 dims: [ 4 ] }
instance_group { count: 2 kind: KIND_CPU }
parameters { key: "temperature" value { string_value: "0.5" } }
`,
);

const server = await InferenceServer.start({ modelRepository: repository, backends: [softmaxBackend()] });
try {
  for (const entry of await server.repositoryIndex()) {
    console.log(`${entry.name} v${entry.version}: ${entry.state} (${entry.reason})`);
  }

  const response = await server.infer('softmax', {
    inputs: { INPUT: { datatype: 'FP32', shape: [2, 4], data: [1, 2, 3, 4, 0, 0, 0, 5] } },
  });
  const out = response.outputs.OUTPUT!;
  console.log(`softmax v${response.modelVersion} -> shape [${out.shape}]:`, Array.from(out.data as Float32Array, (v) => v.toFixed(3)).join(' '));

  try {
    await server.infer('softmax', { inputs: { INPUT: { datatype: 'FP32', shape: [1, 3], data: [1, 2, 3] } } });
  } catch (error) {
    if (!(error instanceof InferenceError)) throw error;
    console.log(`a wrong shape is refused: ${error.code}: ${error.message}`);
  }

  const stats = server.statistics('softmax').model_stats[0]!;
  console.log(`statistics: ${stats.inference_count} inferences in ${stats.execution_count} executions, success ${stats.inference_stats.success.count}`);
} finally {
  await server.stop();
  await rm(repository, { recursive: true, force: true });
}
