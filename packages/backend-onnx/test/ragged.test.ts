import { describe, expect, test } from 'vitest';
import type { ModelConfig } from '@tritium/core';
import { onnxBackend } from '../src/index.js';
import { fp32, loadDirect, outputsOf, request, useTempRepository } from './helpers.js';

const repo = useTempRepository();
const backend = onnxBackend();

/**
 * models/ragged.onnx: INPUT is ragged (every request's elements end to end), ENDS is
 * the batch input BATCH_ACCUMULATED_ELEMENT_COUNT; SUM is each request's sum and
 * DOUBLED (2 * INPUT) goes back to each request in its input's shape; ENDS_SEEN hands
 * ENDS back, one entry per request.
 */
const raggedConfig = (overrides: ModelConfig = {}): ModelConfig => ({
  max_batch_size: 8,
  input: [{ name: 'INPUT', data_type: 'TYPE_FP32', dims: [-1], allow_ragged_batch: true }],
  batch_input: [{ kind: 'BATCH_ACCUMULATED_ELEMENT_COUNT', target_name: ['ENDS'], data_type: 'TYPE_INT32', source_input: ['INPUT'] }],
  output: [
    { name: 'SUM', data_type: 'TYPE_FP32', dims: [1] },
    { name: 'DOUBLED', data_type: 'TYPE_FP32', dims: [-1] },
    { name: 'ENDS_SEEN', data_type: 'TYPE_INT32', dims: [1] },
  ],
  batch_output: [{ target_name: ['DOUBLED'], kind: 'BATCH_SCATTER_WITH_INPUT_SHAPE', source_input: ['INPUT'] }],
  dynamic_batching: {},
  ...overrides,
});

const values = (t: { data: unknown }) => Array.from(t.data as Float32Array);

describe('ragged batching', () => {
  test('requests of different lengths run as one batch; each gets its own sum', async () => {
    const { instances } = await loadDirect(backend, repo.current, 'ragged_sum', 'ragged', raggedConfig());
    const results = outputsOf(
      await instances[0]!.execute([
        request({ INPUT: fp32([1, 2, 3], [1, 3]) }, ['SUM', 'ENDS_SEEN']),
        request({ INPUT: fp32([10], [1, 1]) }, ['SUM', 'ENDS_SEEN']),
        request({ INPUT: fp32([100, 200, 300, 400, 500], [1, 5]) }, ['SUM', 'ENDS_SEEN']),
      ]),
    );
    expect(results.map((r) => r.SUM!.shape)).toEqual([[1, 1], [1, 1], [1, 1]]);
    expect(results.map((r) => values(r.SUM!))).toEqual([[6], [10], [1500]]);
    // One run saw all three: ENDS was [3, 4, 9], not [3], [1] and [5].
    expect(results.map((r) => Array.from(r.ENDS_SEEN!.data as Int32Array))).toEqual([[3], [4], [9]]);
  });

  test('a batch output is scattered back in the shape of each request\'s source input', async () => {
    const { instances } = await loadDirect(backend, repo.current, 'ragged_scatter', 'ragged', raggedConfig());
    const results = outputsOf(
      await instances[0]!.execute([
        request({ INPUT: fp32([1, 2], [1, 2]) }, ['DOUBLED', 'SUM']),
        request({ INPUT: fp32([3, 4, 5, 6], [1, 4]) }, ['DOUBLED', 'SUM']),
      ]),
    );
    expect(results.map((r) => r.DOUBLED!.shape)).toEqual([[1, 2], [1, 4]]);
    expect(results.map((r) => values(r.DOUBLED!))).toEqual([[2, 4], [6, 8, 10, 12]]);
    expect(results.map((r) => values(r.SUM!))).toEqual([[3], [18]]);
    // One request alone is flattened and scattered the same way.
    const [alone] = outputsOf(await instances[0]!.execute([request({ INPUT: fp32([7, 8, 9], [1, 3]) }, ['DOUBLED'])]));
    expect(alone!.DOUBLED!.shape).toEqual([1, 3]);
    expect(values(alone!.DOUBLED!)).toEqual([14, 16, 18]);
  });

  test('a batch input of the wrong datatype, and a ragged input the model does not take as [-1], are refused', async () => {
    const wrongType = raggedConfig({
      batch_input: [{ kind: 'BATCH_ACCUMULATED_ELEMENT_COUNT', target_name: ['ENDS'], data_type: 'TYPE_FP32', source_input: ['INPUT'] }],
    });
    await expect(loadDirect(backend, repo.current, 'ragged_fp32', 'ragged', wrongType)).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: expect.stringMatching(/expects datatype TYPE_FP32 for batch input 'ENDS', model provides TYPE_INT32/),
    });
    const notRagged = {
      max_batch_size: 8,
      input: [{ name: 'INPUT0', data_type: 'TYPE_FP32' as const, dims: [16], allow_ragged_batch: true }, { name: 'INPUT1', data_type: 'TYPE_FP32' as const, dims: [16] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32' as const, dims: [16] }],
    };
    await expect(loadDirect(backend, repo.current, 'ragged_2d', 'add_sub', notRagged)).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: expect.stringMatching(/ragged input 'INPUT0' \(allow_ragged_batch\) must have shape \[-1\] in the model, which gives \[-1,16\]/),
    });
  });
});
