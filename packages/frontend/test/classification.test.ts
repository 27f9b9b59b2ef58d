import { describe, expect, it } from 'vitest';
import { toBf16, toFp16, type DataType, type Tensor } from '@tritium/core';
import { classify } from '../src/classification.js';

const fp64 = (values: number[]): Tensor => ({ datatype: 'FP64', shape: [values.length], data: Float64Array.from(values) });

describe('classify', () => {
  it('returns the top classes of each batch entry as value:index:label, largest first', () => {
    const tensor = { datatype: 'FP32' as const, shape: [2, 3], data: Float32Array.from([0.1, 0.7, 0.2, 0.5, 0.25, 0.25]) };
    expect(classify('P', tensor, 2, true, ['cat', 'dog', 'bird'])).toEqual({
      datatype: 'BYTES',
      shape: [2, 2],
      data: ['0.700000:1:dog', '0.200000:2:bird', '0.500000:0:cat', '0.250000:1:dog'],
    });
  });

  it('prints integer values as they are, as Triton does, and takes the whole tensor of a model without batching', () => {
    const tensor = { datatype: 'INT32' as const, shape: [2, 2], data: Int32Array.from([3, 9, 1, 4]) };
    expect(classify('P', tensor, 10, false, ['a'])).toEqual({ datatype: 'BYTES', shape: [4], data: ['9:1', '4:3', '3:0:a', '1:2'] });
    const bytes = { datatype: 'UINT8' as const, shape: [3], data: Uint8Array.from([7, 255, 0]) };
    expect(classify('P', bytes, 1, false, undefined).data).toEqual(['255:1']);
  });

  it('ranks and prints 64-bit integers exactly, beyond what a double holds', () => {
    const big = { datatype: 'INT64' as const, shape: [3], data: BigInt64Array.from([2n ** 63n - 2n, -(2n ** 63n), 2n ** 63n - 1n]) };
    expect(classify('P', big, 3, false, undefined).data).toEqual(['9223372036854775807:2', '9223372036854775806:0', '-9223372036854775808:1']);
    const unsigned = { datatype: 'UINT64' as const, shape: [2], data: BigUint64Array.from([2n ** 64n - 2n, 2n ** 64n - 1n]) };
    expect(classify('P', unsigned, 1, false, undefined).data).toEqual(['18446744073709551615:1']);
  });

  it("prints floats as C's %f: exact ties to the even digit, every digit of a large value, nan and inf", () => {
    const cases: Array<[number, string]> = [
      [0.0078125, '0.007812'],
      [0.0234375, '0.023438'],
      [-0.0078125, '-0.007812'],
      [1.0000005, '1.000001'],
      [1e30, '1000000000000000019884624838656.000000'],
      [-0, '-0.000000'],
      [2.5e-7, '0.000000'],
      [Infinity, 'inf'],
      [-Infinity, '-inf'],
    ];
    for (const [value, printed] of cases) expect(classify('P', fp64([value]), 1, false, undefined).data, String(value)).toEqual([`${printed}:0`]);
    expect(classify('P', fp64([NaN]), 1, false, undefined).data).toEqual(['nan:0']);
  });

  it('answers an empty batch as Triton does: no batch dimension, no classes', () => {
    const empty = { datatype: 'FP32' as const, shape: [0, 4], data: new Float32Array(0) };
    expect(classify('P', empty, 2, true, undefined)).toEqual({ datatype: 'BYTES', shape: [0], data: [] });
  });

  it.each<[DataType, Tensor]>([
    ['BYTES', { datatype: 'BYTES', shape: [1], data: ['x'] }],
    ['BOOL', { datatype: 'BOOL', shape: [2], data: Uint8Array.from([1, 0]) }],
    ['FP16', { datatype: 'FP16', shape: [2], data: toFp16([1, 2]) }],
    ['BF16', { datatype: 'BF16', shape: [2], data: toBf16([1, 2]) }],
  ])('refuses %s outputs, as Triton does', (datatype, tensor) => {
    expect(() => classify('P', tensor, 1, false, undefined)).toThrow(
      expect.objectContaining({ code: 'INVALID_ARG', message: `class result not available for output 'P' due to unsupported type '${datatype}'` }),
    );
  });
});
