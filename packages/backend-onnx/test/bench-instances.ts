/**
 * Measures instance_group { count: N } served by one shared onnxruntime session
 * versus one session per instance, driven from the main thread the way the server
 * drives instances: each instance runs one execute() at a time, all N concurrently.
 *
 *   npx tsx packages/backend-onnx/test/bench-instances.ts [seconds per case]
 *
 * Not a test (vitest does not pick it up); the README quotes its output.
 */
import { cpus } from 'node:os';
import type { BackendInstance, Tensor } from '@tritium/core';
import { onnxBackend } from '../src/index.js';
import { TempRepository, loadDirect, request } from './helpers.js';

const seconds = Number(process.argv[2] ?? 3);

interface Case {
  readonly model: string;
  readonly batch: number;
  readonly width: number;
}

async function throughput(instances: BackendInstance[], input: Tensor, ms: number): Promise<number> {
  const run = (instance: BackendInstance) => instance.execute([request({ INPUT0: input }, ['OUTPUT0'])]);
  for (const instance of instances) for (let i = 0; i < 20; i++) await run(instance);
  let count = 0;
  const start = performance.now();
  const end = start + ms;
  await Promise.all(
    instances.map(async (instance) => {
      while (performance.now() < end) {
        await run(instance);
        count++;
      }
    }),
  );
  return count / ((performance.now() - start) / 1000);
}

async function main(): Promise<void> {
  const repo = await TempRepository.create();
  const cases: Case[] = [
    { model: 'mlp', batch: 64, width: 256 },
    { model: 'tiny', batch: 1, width: 1 },
  ];
  console.log(`node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? '?'}), ${seconds}s per case`);
  try {
    for (const c of cases) {
      const input: Tensor = { datatype: 'FP32', shape: [c.batch, c.width], data: new Float32Array(c.batch * c.width).fill(0.25) };
      const row: string[] = [];
      for (const n of [1, 2, 4]) {
        for (const variant of ['shared', 'own', 'own, 1 thread each'] as const) {
          if (n === 1 && variant !== 'shared') continue;
          const backend = onnxBackend({ shareSessionsBetweenInstances: variant === 'shared' });
          const name = `${c.model}_${n}_${variant.replace(/\W+/g, '_')}`;
          const config = variant === 'own, 1 thread each' ? { parameters: { intra_op_thread_count: { string_value: '1' } } } : {};
          const { model, instances } = await loadDirect(backend, repo, name, c.model, config, n);
          const perSecond = await throughput(instances, input, seconds * 1000);
          row.push(`N=${n} ${variant}: ${perSecond.toFixed(0)}/s`);
          await Promise.all(instances.map((i) => i.finalize?.()));
          await model.finalize?.();
        }
      }
      console.log(`${c.model} batch ${c.batch} (executions per second): ${row.join(', ')}`);
    }
  } finally {
    await repo.cleanup();
  }
}

await main();
