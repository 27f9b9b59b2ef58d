import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { ServerHarness } from './server-harness.js';

const MLP_WIDTH = 256;
const mlpConfig = (thread: 'worker' | 'inline') => `platform: "onnxruntime_onnx"
max_batch_size: 8
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ ${MLP_WIDTH} ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ ${MLP_WIDTH} ] }
instance_group { count: 1 kind: KIND_CPU }
parameters { key: "execution_thread" value { string_value: "${thread}" } }`;

type Entry = { id: number; timestamps?: { name: string; ns: number }[] };

let dir: string;
let harness: ServerHarness | undefined;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tritium-onnx-phases-'));
});
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
  rmSync(dir, { recursive: true, force: true });
});

describe("an ONNX execution's compute phases (COMPUTE_INPUT_END, COMPUTE_OUTPUT_START)", () => {
  for (const thread of ['worker', 'inline'] as const) {
    test(`${thread}: statistics split into compute_input, compute_infer and compute_output, and traces carry the two times in order`, async () => {
      harness = await ServerHarness.start({ mlp: { artifact: 'mlp', config: mlpConfig(thread) } });
      const file = join(dir, 'trace.json');
      harness.server.updateTraceSettings({ trace_level: ['TIMESTAMPS'], trace_rate: 1, trace_file: file });
      const runs = 5;
      for (let i = 0; i < runs; i++) await harness.infer('mlp', { INPUT0: { datatype: 'FP32', shape: [8, MLP_WIDTH], data: new Float32Array(8 * MLP_WIDTH).fill(i) } });
      const [stats] = harness.server.statistics('mlp').model_stats;
      const { compute_input, compute_infer, compute_output } = stats!.inference_stats;
      expect([compute_input.count, compute_infer.count, compute_output.count]).toEqual([runs, runs, runs]);
      // onnxruntime's run is the inference; gathering and handing the inputs over, and reading the outputs back, are the rest.
      expect(compute_infer.ns).toBeGreaterThan(0);
      expect(compute_input.ns).toBeGreaterThan(0);
      expect(compute_output.ns).toBeGreaterThan(0);
      const batch = stats!.batch_stats.find((b) => b.batch_size === 8)!;
      expect(batch.compute_infer.ns).toBeGreaterThan(0);
      expect(batch.compute_input.ns).toBeGreaterThan(0);
      await harness.stop();
      harness = undefined;
      const entries = JSON.parse(readFileSync(file, 'utf8')) as Entry[];
      for (let id = 1; id <= runs; id++) {
        const stamps = entries.filter((e) => e.id === id && e.timestamps).map((e) => e.timestamps![0]!);
        expect(stamps.map((s) => s.name)).toEqual(['REQUEST_START', 'QUEUE_START', 'COMPUTE_START', 'COMPUTE_INPUT_END', 'COMPUTE_OUTPUT_START', 'COMPUTE_END', 'REQUEST_END']);
        const ns = stamps.map((s) => s.ns);
        expect(ns).toEqual([...ns].sort((a, b) => a - b));
      }
    });
  }
});
