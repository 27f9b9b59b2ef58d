import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ServerHarness } from './server-harness.js';

// Dynamic and sequence batching end to end through server.infer() with ONNX models
// (the scheduling rules are tested in core and @tritium/batcher).
const MLP_WIDTH = 256;

const accumulator = (strategy: string) => `platform: "onnxruntime_onnx"
max_batch_size: 8
input { name: "INPUT" data_type: TYPE_FP32 dims: [ 1 ] }
output { name: "OUTPUT" data_type: TYPE_FP32 dims: [ 1 ] }
sequence_batching {
  ${strategy}
  max_sequence_idle_microseconds: 200000
  state { input_name: "INPUT_STATE" output_name: "OUTPUT_STATE" data_type: TYPE_FP32 dims: [ 1 ]
    initial_state { data_type: TYPE_FP32 dims: [ 1 ] zero_data: true name: "zero" } }
}`;

let harness: ServerHarness;
beforeAll(async () => {
  harness = await ServerHarness.start({
    mlp: {
      artifact: 'mlp',
      config: `platform: "onnxruntime_onnx"
max_batch_size: 64
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ ${MLP_WIDTH} ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ ${MLP_WIDTH} ] }
instance_group { count: 1 kind: KIND_CPU }
dynamic_batching { max_queue_delay_microseconds: 2000 }`,
    },
    direct: { artifact: 'accumulator', config: accumulator('direct { }') },
    oldest: { artifact: 'accumulator', config: accumulator('oldest { max_candidate_sequences: 16 }') },
  });
});
afterAll(async () => {
  await harness?.stop();
});

describe('dynamic batching with an ONNX model', () => {
  test('concurrent batch-1 requests run in few executions, and each gets the rows a lone request gets', async () => {
    const rows = Array.from({ length: 32 }, (_, r) => Float32Array.from({ length: MLP_WIDTH }, (_, i) => ((r + i) % 11) / 11));
    const alone = await Promise.all(rows.slice(0, 2).map(async (data) => (await harness.infer('mlp', { INPUT0: { datatype: 'FP32', shape: [1, MLP_WIDTH], data } })).OUTPUT0!.data));
    const before = harness.server.statistics('mlp').model_stats[0]!;
    const batched = await Promise.all(rows.map(async (data) => (await harness.infer('mlp', { INPUT0: { datatype: 'FP32', shape: [1, MLP_WIDTH], data } })).OUTPUT0!));
    const after = harness.server.statistics('mlp').model_stats[0]!;
    expect(after.inference_count - before.inference_count).toBe(32);
    expect(after.execution_count - before.execution_count).toBeLessThanOrEqual(4);
    expect(batched.every((tensor) => tensor.shape.join() === `1,${MLP_WIDTH}`)).toBe(true);
    for (const [i, expected] of alone.entries()) {
      const got = batched[i]!.data as Float32Array;
      (expected as Float32Array).forEach((value, k) => expect(got[k]).toBeCloseTo(value, 4));
    }
  });
});

describe.each(['direct', 'oldest'])('sequence batching (%s) with implicit state on an ONNX model', (model) => {
  test('interleaved sequences each keep their own running sum', async () => {
    const step = async (id: number | string, value: number, flags: { start?: boolean; end?: boolean } = {}) => {
      const response = await harness.server.infer(model, { inputs: { INPUT: { datatype: 'FP32', shape: [1, 1], data: [value] } }, sequence: { id, ...flags } });
      return (response.outputs.OUTPUT!.data as Float32Array)[0];
    };
    const sums = await Promise.all(
      [1, 2, 'three', 4].map(async (id, s) => {
        const seen: number[] = [];
        for (let k = 1; k <= 6; k++) seen.push((await step(id, k * (s + 1), { start: k === 1, end: k === 6 }))!);
        return seen;
      }),
    );
    sums.forEach((seen, s) => expect(seen).toEqual([1, 3, 6, 10, 15, 21].map((v) => v * (s + 1))));
    expect(Object.keys((await harness.server.infer(model, { inputs: { INPUT: { datatype: 'FP32', shape: [1, 1], data: [1] } }, sequence: { id: 9, start: true, end: true } })).outputs)).toEqual(['OUTPUT']);
  });
});
