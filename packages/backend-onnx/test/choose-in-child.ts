import { consoleLogger } from '../../core/src/console-logger.js';
import { DETACHED } from '../../core/test/helpers/detached.js';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateModelConfig } from '@tritium/core';
import type { Tensor } from '@tritium/core';
import { onnxBackend } from '../src/index.js';
import type { OnnxInstance } from '../src/onnx-instance.js';
import { MEASURED_RUNS, WARMUP_RUNS } from '../src/thread-choice.js';
import { fp32, mlpInput, outputsOf, request } from './helpers.js';

/**
 * Loads the tiny model and a slow one (the MLP at 512 rows on one intra-op thread, a
 * run of a millisecond or more) with `execution_thread` left to "auto" in a fresh
 * process, as the first sessions onnxruntime opens in it, runs each until the choice
 * decides, and prints where each runs and the model's description as JSON. Tests run it
 * as a child process (`node --import tsx`, from the repository root).
 */
const models = fileURLToPath(new URL('../models/', import.meta.url));
const backend = onnxBackend();
const logged: string[] = [];
const logger = { ...consoleLogger, info: (message: string) => void logged.push(message) };

async function choose(name: string, artifact: string, dims: number[], input: Record<string, Tensor>) {
  const config = validateModelConfig({
    name,
    backend: 'onnxruntime',
    max_batch_size: 0,
    input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims }],
    output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims }],
    parameters: { intra_op_thread_count: { string_value: '1' } },
  });
  const files = { modelDirectory: models, versionDirectory: models, modelPath: join(models, `${artifact}.onnx`), version: 1 };
  const model = await backend.createModel({ ...files, name, config, ...DETACHED, logger });
  const instance = (await model.createInstance({ name: `${name}_0`, kind: 'KIND_CPU', health: { recovering() {}, restored() {}, failed() {} } })) as OnnxInstance;
  for (let i = 0; i < WARMUP_RUNS + MEASURED_RUNS + 2; i++) outputsOf(await instance.execute([request(input, [])]));
  // The inline session opens in the background: run until a run goes there.
  for (let i = 0; i < 200 && instance.thread === 'worker' && model.description?.includes('inline for'); i++) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    outputsOf(await instance.execute([request(input, [])]));
  }
  const outcome = { thread: instance.thread, description: model.description };
  await instance.finalize?.();
  await model.finalize?.();
  return outcome;
}

const slowInput = { INPUT0: fp32(mlpInput(512), [512, 256]) };
const tiny = await choose('tiny', 'tiny', [-1, 1], { INPUT0: fp32([1], [1, 1]) });
const slow = await choose('mlp', 'mlp', [-1, 256], slowInput);
console.log(JSON.stringify({ tiny, slow, logged }));
