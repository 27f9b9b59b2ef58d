import { describe, expect, test } from 'vitest';
import { InferenceError } from '@tritium/core';
import type { ModelConfig } from '@tritium/core';
import { onnxBackend } from '../src/index.js';
import { autoCompleteFromSignature } from '../src/auto-complete.js';
import { useTempRepository } from './helpers.js';

const repo = useTempRepository();

const backend = onnxBackend();

async function complete(name: string, artifact: string | Uint8Array, config: ModelConfig = {}): Promise<ModelConfig> {
  const files = await repo.current.addModel(name, artifact);
  return backend.autoCompleteConfig!({ name, backend: 'onnxruntime', ...config }, files);
}

describe('auto-complete (Triton ONNX rules)', () => {
  test('a model whose inputs and outputs all have a variable first dimension batches, with max_batch_size 4 and dynamic batching', async () => {
    const config = await complete('add_sub', 'add_sub');
    expect(config).toMatchObject({
      name: 'add_sub',
      backend: 'onnxruntime',
      platform: 'onnxruntime_onnx',
      max_batch_size: 4,
      dynamic_batching: {},
      input: [
        { name: 'INPUT0', data_type: 'TYPE_FP32', dims: [16] },
        { name: 'INPUT1', data_type: 'TYPE_FP32', dims: [16] },
      ],
      output: [
        { name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [16] },
        { name: 'OUTPUT1', data_type: 'TYPE_FP32', dims: [16] },
      ],
    });
  });

  test('symbolic dims other than the first stay variable (-1)', async () => {
    const config = await complete('var_batch', 'var_batch');
    expect(config.max_batch_size).toBe(4);
    expect(config.input).toEqual([{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [-1] }]);
    expect(config.output).toEqual([
      { name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [-1] },
      { name: 'OUTPUT1', data_type: 'TYPE_FP32', dims: [1] },
    ]);
  });

  test('a fixed-shape model does not batch: max_batch_size stays 0, full dims, no scheduler', async () => {
    const config = await complete('fixed', 'fixed_shape');
    expect(config.max_batch_size ?? 0).toBe(0);
    expect(config.dynamic_batching).toBeUndefined();
    expect(config.input).toEqual([{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [2, 3] }]);
    expect(config.output).toEqual([{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [2, 4] }]);
  });

  test('a max_batch_size on a model that cannot batch is refused', async () => {
    const error = await complete('fixed_mbs', 'fixed_shape', { max_batch_size: 8 }).catch((e) => e);
    expect(error).toBeInstanceOf(InferenceError);
    expect(error.code).toBe('INVALID_ARG');
    expect(error.message).toMatch(/does not support batching while non-zero max_batch_size 8/);
    expect(error.message).toMatch(/'INPUT0' has dims \[2,3\]/);
  });

  test('a given max_batch_size is kept; dynamic batching only above 1 and without another scheduler', async () => {
    expect(await complete('mbs16', 'add_sub', { max_batch_size: 16 })).toMatchObject({ max_batch_size: 16, dynamic_batching: {} });
    const one = await complete('mbs1', 'add_sub', { max_batch_size: 1 });
    expect(one.max_batch_size).toBe(1);
    expect(one.dynamic_batching).toBeUndefined();
    const seq = await complete('seq', 'add_sub', { sequence_batching: {} });
    expect(seq.dynamic_batching).toBeUndefined();
    expect(seq.max_batch_size).toBe(4);
  });

  test('the backend option defaultMaxBatchSize replaces 4', async () => {
    const files = await repo.current.addModel('mbs_option', 'add_sub');
    const config = await onnxBackend({ defaultMaxBatchSize: 32 }).autoCompleteConfig!({ name: 'mbs_option' }, files);
    expect(config.max_batch_size).toBe(32);
  });

  test('only what is missing is filled: given inputs are kept, outputs come from the model', async () => {
    const input = [{ name: 'INPUT0', data_type: 'TYPE_FP32' as const, dims: [1] }];
    const config = await complete('partial', 'tiny', { max_batch_size: 2, input });
    expect(config.input).toEqual(input);
    expect(config.output).toEqual([{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [1] }]);
  });

  test('a config that lists inputs and outputs is returned as it is, without opening the model', async () => {
    const given: ModelConfig = {
      name: 'complete',
      backend: 'onnxruntime',
      input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [1] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [1] }],
    };
    const files = await repo.current.addModel('complete', new TextEncoder().encode('not an onnx model'));
    expect(await backend.autoCompleteConfig!(given, files)).toBe(given);
  });

  test('the model.onnx directory form (external weights) is read too', async () => {
    const config = await complete('ext', 'external_weights');
    expect(config).toMatchObject({ max_batch_size: 4, input: [{ name: 'INPUT0', dims: [8] }], output: [{ name: 'OUTPUT0', dims: [8] }] });
  });

  test('every ONNX type Triton maps gets its TYPE_ name', async () => {
    const expected: Record<string, string> = {
      bool: 'TYPE_BOOL', uint8: 'TYPE_UINT8', uint16: 'TYPE_UINT16', uint32: 'TYPE_UINT32', uint64: 'TYPE_UINT64',
      int8: 'TYPE_INT8', int16: 'TYPE_INT16', int32: 'TYPE_INT32', int64: 'TYPE_INT64',
      fp16: 'TYPE_FP16', fp32: 'TYPE_FP32', fp64: 'TYPE_FP64', string: 'TYPE_STRING',
    };
    for (const [suffix, type] of Object.entries(expected)) {
      const config = await complete(`identity_${suffix}`, `identity_${suffix}`);
      expect(config.input).toEqual([{ name: 'INPUT0', data_type: type, dims: [-1] }]);
      expect(config.output).toEqual([{ name: 'OUTPUT0', data_type: type, dims: [-1] }]);
    }
  });

  test('a model with bfloat16 tensors cannot be opened from JavaScript: UNSUPPORTED', async () => {
    const error = await complete('bf16', 'identity_bf16').catch((e) => e);
    expect(error).toBeInstanceOf(InferenceError);
    expect(error.code).toBe('UNSUPPORTED');
    expect(error.message).toMatch(/bfloat16/);
  });
});

describe('auto-complete of scalar tensors', () => {
  const scalar = { inputs: [{ name: 'X', datatype: 'FP32' as const, dims: [-1] }], outputs: [{ name: 'Y', datatype: 'INT64' as const, dims: [-1] }] };

  test('batching: a model tensor of only the batch dimension becomes dims [1] with an empty reshape', () => {
    const config = autoCompleteFromSignature({ name: 's' }, scalar);
    expect(config.input).toEqual([{ name: 'X', data_type: 'TYPE_FP32', dims: [1], reshape: { shape: [] } }]);
    expect(config.output).toEqual([{ name: 'Y', data_type: 'TYPE_INT64', dims: [1], reshape: { shape: [] } }]);
  });

  test('no batching: a rank-0 model tensor becomes dims [1] without a reshape', () => {
    const config = autoCompleteFromSignature({ name: 's' }, { inputs: [{ name: 'X', datatype: 'FP32', dims: [] }], outputs: [] });
    expect(config.max_batch_size ?? 0).toBe(0);
    expect(config.input).toEqual([{ name: 'X', data_type: 'TYPE_FP32', dims: [1] }]);
  });
});
