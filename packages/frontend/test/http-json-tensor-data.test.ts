import { describe, expect, it, vi } from 'vitest';
import { toBf16, toFp16, typedArrayConstructor, type DataType } from '@tritium/core';
import { FlatTensorValues } from '../src/http/flat-tensor-values.js';
import { jsonTensorData } from '../src/http/json-tensor-data.js';

const convert = (datatype: DataType, values: unknown[]) => jsonTensorData("input 'X'", datatype, FlatTensorValues.of(values));

/** The typed array core makes of a plain array (docs/api.md, "Data types"), by the public helpers. */
function coreData(datatype: DataType, values: ReadonlyArray<number | boolean>): ArrayBufferView {
  const numbers = values.map(Number);
  if (datatype === 'FP16') return toFp16(numbers);
  if (datatype === 'BF16') return toBf16(numbers);
  if (datatype === 'INT64') return BigInt64Array.from(numbers, BigInt);
  if (datatype === 'UINT64') return BigUint64Array.from(numbers, BigInt);
  const data = new (typedArrayConstructor(datatype)!)(numbers.length) as Float64Array;
  data.set(numbers);
  return data;
}

describe('jsonTensorData', () => {
  it('makes the typed array core would make of the same numbers, across blocks', async () => {
    const many = Array.from({ length: 70_000 }, (_, i) => (i % 200) - 100);
    const cases: Array<[DataType, unknown[]]> = [
      ['FP32', [0.1, -2.5, 1e40, ...many]],
      ['FP64', [0.1, 5e-324, ...many]],
      ['FP16', [0.1, 65504, 1e6]],
      ['BF16', [0.1, 3e38]],
      ['INT8', [-128, 127, -0, ...many]],
      ['UINT32', [0, 4294967295]],
      ['INT64', [-9007199254740991, 9007199254740991, -1, -(2 ** 32), 2 ** 32 + 5, ...many]],
      ['UINT64', [0, 9007199254740991, 2 ** 32]],
      ['BOOL', [true, false]],
      ['BOOL', [0, 1, -0]],
    ];
    for (const [datatype, values] of cases) {
      const data = await convert(datatype, values);
      expect(ArrayBuffer.isView(data), datatype).toBe(true);
      const plain = values.map((value) => (datatype !== 'BOOL' && typeof value === 'boolean' ? Number(value) : value));
      expect(data, datatype).toEqual(coreData(datatype, plain as number[]));
    }
  });

  it('refuses a number that does not fit the datatype, in the words core uses', async () => {
    // Core's words for the same arrays given to server.infer() (its tensor tests pin them).
    const cases: Array<[DataType, unknown[], string]> = [
      ['INT32', [1, 2.5], "input 'X': element 1 is 2.5, expected an integer in [-2147483648, 2147483647] for INT32"],
      ['UINT8', [256], "input 'X': element 0 is 256, expected an integer in [0, 255] for UINT8"],
      ['INT8', [-129], "input 'X': element 0 is -129, expected an integer in [-128, 127] for INT8"],
      ['UINT64', [3, -1], "input 'X': element 1 is -1, expected a bigint or safe integer in [0, 18446744073709551615] for UINT64"],
      ['INT64', [2 ** 53], "input 'X': element 0 is 9007199254740992, expected a bigint or safe integer in [-9223372036854775808, 9223372036854775807] for INT64"],
    ];
    for (const [datatype, values, expected] of cases) {
      await expect(convert(datatype, values), datatype).rejects.toThrow(expect.objectContaining({ code: 'INVALID_ARG', message: expected }));
    }
  });

  it("refuses an element of the wrong JSON kind in Triton's words, without building an array of numbers or booleans", async () => {
    const toArray = vi.spyOn(FlatTensorValues.prototype, 'toArray');
    const cases: Array<[DataType, unknown[], string]> = [
      ['FP32', [true, false], "Unable to parse 'data': attempt to access JSON non-number as double: input 'X' element 0 is boolean true"],
      ['INT8', [false], "Unable to parse 'data': attempt to access JSON non-signed-integer as signed-integer: input 'X' element 0 is boolean false"],
      ['BYTES', [1, 2.5], "attempt to access JSON non-string as string: input 'X' element 0 is number 1"],
    ];
    for (const [datatype, values, message] of cases) {
      await expect(convert(datatype, values), datatype).rejects.toThrow(expect.objectContaining({ code: 'INTERNAL', message }));
    }
    expect(toArray).not.toHaveBeenCalled();
    toArray.mockRestore();
    await expect(convert('UINT8', [1, 'x'])).rejects.toThrow(`Unable to parse 'data': attempt to access JSON non-unsigned-integer as unsigned-integer: input 'X' element 1 is the string "x"`);
    // A number other than 0 and 1 for BOOL, as generate's {"STREAM": 123} gives one (Triton's generate_endpoint_test).
    await expect(convert('BOOL', [0, 2])).rejects.toThrow(
      expect.objectContaining({ code: 'INTERNAL', message: "Unable to parse 'data': attempt to access JSON non-boolean as boolean: input 'X' element 1 is 2 (0 and 1 are taken too)" }),
    );
    await expect(convert('BOOL', [true, 'false'])).rejects.toThrow("attempt to access JSON non-boolean as boolean: input 'X' element 1 is the string \"false\"");
  });

  it('passes strings, bigints and mixed elements to core as a plain array, bigints as doubles for a float tensor', async () => {
    expect(await convert('BYTES', ['a', 'b'])).toEqual(['a', 'b']);
    expect(await convert('INT64', [1, 9007199254740993n])).toEqual([1, 9007199254740993n]);
    expect(await convert('FP64', [1, 18446744073709551615n])).toEqual([1, 18446744073709551615]);
    await expect(jsonTensorData("input 'X'", 'FP32', 5)).rejects.toThrow("input 'X': 'data' must be an array, got number 5");
  });
});

function messageOf(thrower: () => unknown): string {
  try {
    thrower();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}
