import { describe, expect, it } from 'vitest';
import { classify } from '../src/classification.js';

describe('classify', () => {
  it('returns the top classes of each batch entry as value:index:label, largest first', () => {
    const tensor = { datatype: 'FP32' as const, shape: [2, 3], data: Float32Array.from([0.1, 0.7, 0.2, 0.5, 0.25, 0.25]) };
    expect(classify('P', tensor, 2, true, ['cat', 'dog', 'bird'])).toEqual({
      datatype: 'BYTES',
      shape: [2, 2],
      data: ['0.700000:1:dog', '0.200000:2:bird', '0.500000:0:cat', '0.250000:1:dog'],
    });
  });

  it('leaves the label off where there is none, and takes the whole tensor of a model without batching', () => {
    const tensor = { datatype: 'INT32' as const, shape: [2, 2], data: Int32Array.from([3, 9, 1, 4]) };
    expect(classify('P', tensor, 10, false, ['a'])).toEqual({ datatype: 'BYTES', shape: [4], data: ['9.000000:1', '4.000000:3', '3.000000:0:a', '1.000000:2'] });
  });

  it('refuses BYTES outputs', () => {
    expect(() => classify('P', { datatype: 'BYTES', shape: [1], data: ['x'] }, 1, false, undefined)).toThrow(/output 'P': classification needs a numeric output/);
  });
});
