import { readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { InferenceServer } from '@tritium/core';
import { onnxBackend } from '../src/index.js';
import { range, TempRepository } from './helpers.js';

/**
 * Loads copies of the tiny model with default configs (auto-completed, two CPU
 * instances each) in a fresh process, in two equal steps, and prints as JSON the
 * process's threads (Linux) and RSS after each step and how long each step took: what a
 * model costs is the difference between the steps, past the fixed cost of the first.
 * Tests run it as a child process (`node --import tsx`, from the repository root).
 * Argument: the number of models in each step.
 */
const perStep = Number(process.argv[2] ?? 20);
const repo = await TempRepository.create();
const threads = () => readdirSync('/proc/self/task').length;
const steps: Array<{ threads: number; rss: number; milliseconds: number }> = [];
let server: InferenceServer | undefined;
try {
  for (const name of range(2 * perStep).map((i) => `tiny${i}`)) await repo.addModel(name, 'tiny');
  server = await InferenceServer.start({ modelRepository: repo.root, modelControlMode: 'explicit', backends: [onnxBackend()] });
  for (let step = 0; step < 2; step++) {
    const start = performance.now();
    for (const i of range(perStep, step * perStep)) await server.loadModel(`tiny${i}`);
    const milliseconds = performance.now() - start;
    // Let ended threads and freed memory settle before measuring.
    await new Promise((resolve) => setTimeout(resolve, 200));
    steps.push({ threads: threads(), rss: process.memoryUsage().rss, milliseconds });
  }
  const { outputs } = await server.infer(`tiny${2 * perStep - 1}`, { inputs: { INPUT0: { datatype: 'FP32', shape: [1, 1], data: new Float32Array([1]) } } });
  console.log(JSON.stringify({ steps, answer: Array.from(outputs.OUTPUT0!.data as Float32Array) }));
} finally {
  await server?.stop();
  await repo.cleanup();
}
