import { describe, expect, it } from 'vitest';
import { InferenceError, type Tensor } from '@tritium/core';
import { gatherBatchInput, scatterBatchOutputs, type BackendRequest } from '@tritium/core/backend';

function request(inputs: Record<string, Tensor>, batchSize: number): BackendRequest {
  return {
    id: 'r', modelName: 'm', modelVersion: 1, inputs, requestedOutputs: [], parameters: {}, batchSize,
    priority: 0, timeoutMicroseconds: 0, sequence: undefined, isCancelled: false, onCancel: () => () => {}, response: { send() {}, close() {}, fail() {} },
  };
}

const rows = (n: number, width: number, start: number): Tensor => ({
  datatype: 'INT32',
  shape: [n, width],
  data: Int32Array.from({ length: n * width }, (_, i) => start + i),
});

describe('gatherBatchInput / scatterBatchOutputs', () => {
  it('joins requests along the batch dimension and splits outputs back by batch size', () => {
    const requests = [request({ X: rows(1, 2, 0) }, 1), request({ X: rows(2, 2, 10) }, 2), request({ X: rows(1, 2, 20) }, 1)];
    const batch = gatherBatchInput(requests, 'X');
    expect(batch.shape).toEqual([4, 2]);
    expect(Array.from(batch.data as Int32Array)).toEqual([0, 1, 10, 11, 12, 13, 20, 21]);
    const doubled: Tensor = { datatype: 'INT32', shape: [4, 2], data: (batch.data as Int32Array).map((v) => v * 2) };
    const names: Tensor = { datatype: 'BYTES', shape: [4], data: ['a', 'b', 'c', 'd'] };
    const scattered = scatterBatchOutputs(requests, { Y: doubled, N: names });
    expect(scattered.map((o) => o.Y!.shape)).toEqual([[1, 2], [2, 2], [1, 2]]);
    expect(scattered.map((o) => Array.from(o.Y!.data as Int32Array))).toEqual([[0, 2], [20, 22, 24, 26], [40, 42]]);
    expect(scattered.map((o) => o.N!.data)).toEqual([['a'], ['b', 'c'], ['d']]);
  });

  it('passes a single request through without copying', () => {
    const x = rows(3, 2, 0);
    const only = [request({ X: x }, 3)];
    expect(gatherBatchInput(only, 'X')).toBe(x);
    expect(scatterBatchOutputs(only, { Y: x })[0]!.Y).toBe(x);
  });

  it('refuses requests that do not stack, and outputs whose batch does not add up', () => {
    const mixed = [request({ X: rows(1, 2, 0) }, 1), request({ X: rows(1, 3, 0) }, 1)];
    expect(() => gatherBatchInput(mixed, 'X')).toThrow(InferenceError);
    expect(() => gatherBatchInput(mixed, 'X')).toThrow(/cannot batch shape \[1,3\]/);
    expect(() => gatherBatchInput(mixed, 'Z')).toThrow(/has no input 'Z'/);
    const two = [request({ X: rows(1, 2, 0) }, 1), request({ X: rows(1, 2, 0) }, 1)];
    expect(() => scatterBatchOutputs(two, { Y: rows(3, 2, 0) })).toThrow(/model 'm' output 'Y': batch dimension is 3, expected 2/);
    expect(() => scatterBatchOutputs([request({ X: rows(1, 2, 0) }, 1)], { Y: rows(2, 2, 0) })).toThrow(/batch dimension is 2, expected 1/);
  });
});
