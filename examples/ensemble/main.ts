/**
 * An ensemble as Triton users build them: preprocess (Python) -> scorer (ONNX) ->
 * postprocess (Python), served as one model, `pipeline`. Eight callers send raw 8-bit
 * readings; each gets the three best classes. The ensemble's answer is checked against
 * calling the three models one after another.
 * Run: npx -y pnpm@10.34.9 example:ensemble
 */
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bytesElementToString, InferenceServer, type Tensor } from '@tritium/core';
import { onnxBackend } from '@tritium/backend-onnx';
import { pythonBackend } from '@tritium/backend-python';

const MODELS = fileURLToPath(new URL('./models/', import.meta.url));
const MLP = fileURLToPath(new URL('../../packages/backend-onnx/models/mlp.onnx', import.meta.url));

const repository = await mkdtemp(join(tmpdir(), 'tritium-ensemble-'));
await cp(MODELS, repository, { recursive: true });
await cp(MLP, join(repository, 'scorer', '1', 'model.onnx'));
// An ensemble's version directory holds nothing, and git keeps no empty directory: make it here.
await mkdir(join(repository, 'pipeline', '1'));
const server = await InferenceServer.start({ modelRepository: repository, backends: [pythonBackend(), onnxBackend()] });

try {
  for (const entry of await server.repositoryIndex()) console.log(`${entry.name} v${entry.version}: ${entry.state}`);
  const readings = Array.from({ length: 8 }, (_, caller) => Uint8Array.from({ length: 256 }, (_, i) => (i * 7 + caller * 31) % 256));
  const raw = (data: Uint8Array): Tensor => ({ datatype: 'UINT8', shape: [1, 256], data });
  const answers = await Promise.all(readings.map((data) => server.infer('pipeline', { inputs: { RAW: raw(data) } })));
  let agree = 0;
  for (const [caller, answer] of answers.entries()) {
    const classes = Array.from(answer.outputs.TOP_CLASSES!.data as Int32Array);
    const scores = Array.from(answer.outputs.TOP_SCORES!.data as Float32Array, (s) => s.toFixed(3));
    const labels = (answer.outputs.TOP_LABELS!.data as Uint8Array[]).map(bytesElementToString);
    console.log(`caller ${caller}: ${labels.join(', ')} (scores ${scores.join(', ')})`);
    // The same three models called one after another must give the same answer.
    const features = await server.infer('preprocess', { inputs: { RAW: raw(readings[caller]!) } });
    const scored = await server.infer('scorer', { inputs: { INPUT0: features.outputs.FEATURES! } });
    const post = await server.infer('postprocess', { inputs: { SCORES: scored.outputs.OUTPUT0! } });
    if (Array.from(post.outputs.TOP_CLASSES!.data as Int32Array).join() === classes.join()) agree++;
  }
  console.log(`${agree} of ${answers.length} answers equal the three models called one after another`);
  for (const name of ['pipeline', 'preprocess', 'scorer', 'postprocess']) {
    const stats = server.statistics(name).model_stats[0]!;
    console.log(`${name}: ${stats.inference_stats.success.count} requests, ${stats.execution_count} executions`);
  }
} finally {
  await server.stop();
  await rm(repository, { recursive: true, force: true });
}
