import { describe, expect, it } from 'vitest';
import type { ModelConfig, Tensor } from '@tritium/core';
import {
  batchInputTensors,
  gatherBatchInput,
  scatterWithInputShape,
  type BackendRequest,
  type BatchInputConfig,
} from '@tritium/core/backend';
import { batchInputTensor } from '../../src/backend/batch-inputs.js';
import { normalizeModelConfig } from '../../src/config/normalize.js';

function request(inputs: Record<string, Tensor>): BackendRequest {
  return {
    id: 'r', modelName: 'm', modelVersion: 1, inputs, requestedOutputs: [], parameters: {}, batchSize: inputs.X?.shape[0] ?? 1,
    priority: 0, timeoutMicroseconds: 0, sequence: undefined, isCancelled: false, onCancel: () => () => {}, response: { send() {}, close() {}, fail() {} },
  };
}

const fp32 = (shape: number[], start = 0): Tensor => ({
  datatype: 'FP32',
  shape,
  data: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => start + i),
});

/** Three requests of a ragged input X: shapes [1,3], [1,1] and [2,2] (3, 1 and 4 elements). */
const batch = [request({ X: fp32([1, 3], 0) }), request({ X: fp32([1, 1], 10) }), request({ X: fp32([2, 2], 20) })];

const kind = (k: BatchInputConfig['kind'], dataType: 'TYPE_INT32' | 'TYPE_FP32' = 'TYPE_INT32'): BatchInputConfig => ({
  kind: k,
  target_name: ['T'],
  data_type: dataType,
  source_input: ['X'],
});

const values = (t: Tensor) => Array.from(t.data as Int32Array | Float32Array);

describe('batch inputs, one per kind, for requests of 3, 1 and 4 elements', () => {
  it('BATCH_ELEMENT_COUNT: each request\'s element count', () => {
    const t = batchInputTensor(kind('BATCH_ELEMENT_COUNT'), batch);
    expect(t).toMatchObject({ datatype: 'INT32', shape: [3] });
    expect(values(t)).toEqual([3, 1, 4]);
  });

  it('BATCH_ACCUMULATED_ELEMENT_COUNT: where each request\'s elements end, in FP32 when configured so', () => {
    const t = batchInputTensor(kind('BATCH_ACCUMULATED_ELEMENT_COUNT', 'TYPE_FP32'), batch);
    expect(t.datatype).toBe('FP32');
    expect(t.data).toBeInstanceOf(Float32Array);
    expect(t.shape).toEqual([3]);
    expect(values(t)).toEqual([3, 4, 8]);
  });

  it('BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO: the same after a leading 0', () => {
    const t = batchInputTensor(kind('BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO'), batch);
    expect(t.shape).toEqual([4]);
    expect(values(t)).toEqual([0, 3, 4, 8]);
  });

  it('BATCH_MAX_ELEMENT_COUNT_AS_SHAPE: the largest count as the shape', () => {
    const t = batchInputTensor(kind('BATCH_MAX_ELEMENT_COUNT_AS_SHAPE'), batch);
    expect(t.shape).toEqual([4]);
    expect(values(t)).toEqual([0, 0, 0, 0]);
  });

  it('BATCH_ITEM_SHAPE: each batch item\'s shape without the batch dimension, a row per item', () => {
    const t = batchInputTensor(kind('BATCH_ITEM_SHAPE'), batch);
    expect(t.shape).toEqual([4, 1]);
    expect(values(t)).toEqual([3, 1, 2, 2]);
    const matrices = [request({ X: fp32([1, 2, 5]) }), request({ X: fp32([2, 3, 1]) })];
    const m = batchInputTensor(kind('BATCH_ITEM_SHAPE'), matrices);
    expect(m.shape).toEqual([3, 2]);
    expect(values(m)).toEqual([2, 5, 3, 1, 3, 1]);
  });

  it('BATCH_ITEM_SHAPE_FLATTEN: the same values in one dimension', () => {
    const matrices = [request({ X: fp32([1, 2, 5]) }), request({ X: fp32([2, 3, 1]) })];
    const t = batchInputTensor(kind('BATCH_ITEM_SHAPE_FLATTEN'), matrices);
    expect(t.shape).toEqual([6]);
    expect(values(t)).toEqual([2, 5, 3, 1, 3, 1]);
  });

  it('batchInputTensors gives every target name of every batch input its tensor', () => {
    const config = normalizeModelConfig({
      name: 'm',
      max_batch_size: 8,
      input: [{ name: 'X', data_type: 'TYPE_FP32', dims: [-1], allow_ragged_batch: true }],
      output: [{ name: 'Y', data_type: 'TYPE_FP32', dims: [1] }],
      batch_input: [
        { kind: 'BATCH_ACCUMULATED_ELEMENT_COUNT', target_name: ['ENDS', 'ENDS_TOO'], data_type: 'TYPE_INT32', source_input: ['X'] },
        { kind: 'BATCH_ELEMENT_COUNT', target_name: ['COUNTS'], data_type: 'TYPE_FP32', source_input: ['X'] },
      ],
    });
    const tensors = batchInputTensors(config, batch);
    expect(Object.keys(tensors).sort()).toEqual(['COUNTS', 'ENDS', 'ENDS_TOO']);
    expect(values(tensors.ENDS!)).toEqual([3, 4, 8]);
    expect(tensors.ENDS_TOO).toBe(tensors.ENDS);
    expect(values(tensors.COUNTS!)).toEqual([3, 1, 4]);
  });

  it('a request without the source input is INVALID_ARG', () => {
    expect(() => batchInputTensor(kind('BATCH_ELEMENT_COUNT'), [request({ Z: fp32([1, 1]) })])).toThrow(/has no input 'X'/);
  });
});

describe('ragged gathering', () => {
  it('joins requests of different shapes end to end into one dimension', () => {
    const t = gatherBatchInput(batch, 'X', { ragged: true });
    expect(t.shape).toEqual([8]);
    expect(values(t)).toEqual([0, 1, 2, 10, 20, 21, 22, 23]);
  });

  it('flattens a single request too, without copying its data', () => {
    const only = [request({ X: fp32([1, 3]) })];
    const t = gatherBatchInput(only, 'X', { ragged: true });
    expect(t.shape).toEqual([3]);
    expect(t.data).toBe(only[0]!.inputs.X!.data);
  });

  it('still refuses requests whose datatypes differ', () => {
    const mixed = [request({ X: fp32([1, 2]) }), request({ X: { datatype: 'INT32', shape: [1, 2], data: Int32Array.of(1, 2) } })];
    expect(() => gatherBatchInput(mixed, 'X', { ragged: true })).toThrow(/cannot batch shape \[1,2\] \(INT32\)/);
  });
});

describe('scatterWithInputShape (BATCH_SCATTER_WITH_INPUT_SHAPE)', () => {
  const config = (output: ModelConfig['output']) =>
    normalizeModelConfig({
      name: 'm',
      max_batch_size: 8,
      input: [{ name: 'X', data_type: 'TYPE_FP32', dims: [-1], allow_ragged_batch: true }],
      output,
      batch_output: [{ target_name: ['Y'], kind: 'BATCH_SCATTER_WITH_INPUT_SHAPE', source_input: ['X'] }],
    });

  it('gives each request the shape of its source input where the output dims are variable', () => {
    const y = fp32([8], 100);
    const pieces = scatterWithInputShape(config([{ name: 'Y', data_type: 'TYPE_FP32', dims: [-1] }]), batch, 'Y', y);
    expect(pieces.map((p) => p.shape)).toEqual([[1, 3], [1, 1], [2, 2]]);
    expect(pieces.map(values)).toEqual([[100, 101, 102], [103], [104, 105, 106, 107]]);
  });

  it('keeps fixed dims of the config', () => {
    const y = fp32([16], 0);
    const pieces = scatterWithInputShape(config([{ name: 'Y', data_type: 'TYPE_FP32', dims: [-1, 2] }]), batch, 'Y', y);
    expect(pieces.map((p) => p.shape)).toEqual([[1, 3, 2], [1, 1, 2], [2, 2, 2]]);
    expect(values(pieces[1]!)).toEqual([6, 7]);
  });

  it('refuses an output whose element count does not match the inputs, and a name that is no batch output', () => {
    const cfg = config([
      { name: 'Y', data_type: 'TYPE_FP32', dims: [-1] },
      { name: 'W', data_type: 'TYPE_FP32', dims: [1] },
    ]);
    expect(() => scatterWithInputShape(cfg, batch, 'Y', fp32([7]))).toThrow(/output 'Y': the model returned 7 elements .* ask for 8/);
    expect(() => scatterWithInputShape(cfg, batch, 'W', fp32([3]))).toThrow(/'W' is not a batch output/);
  });
});
