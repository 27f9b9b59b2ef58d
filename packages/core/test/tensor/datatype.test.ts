import { describe, expect, it } from 'vitest';
import {
  DATA_TYPES,
  dataTypeFromConfig,
  dataTypeToConfig,
  elementByteSize,
  isDataType,
  typedArrayConstructor,
} from '../../src/tensor/index.js';
import { expectInvalidArg } from './expect-error.js';

describe('datatype', () => {
  it('lists Triton wire names', () => {
    expect(DATA_TYPES).toEqual([
      'BOOL', 'UINT8', 'UINT16', 'UINT32', 'UINT64', 'INT8', 'INT16', 'INT32', 'INT64',
      'FP16', 'FP32', 'FP64', 'BF16', 'BYTES',
    ]);
  });

  it('recognizes only its own names', () => {
    for (const t of DATA_TYPES) expect(isDataType(t)).toBe(true);
    for (const s of ['fp32', 'TYPE_FP32', 'STRING', 'toString', '__proto__', 'hasOwnProperty', '']) {
      expect(isDataType(s)).toBe(false);
    }
  });

  it('maps config names both ways, BYTES as TYPE_STRING', () => {
    expect(dataTypeToConfig('BYTES')).toBe('TYPE_STRING');
    expect(dataTypeFromConfig('TYPE_STRING')).toBe('BYTES');
    expect(dataTypeToConfig('FP32')).toBe('TYPE_FP32');
    for (const t of DATA_TYPES) expect(dataTypeFromConfig(dataTypeToConfig(t))).toBe(t);
  });

  it.each(['TYPE_INVALID', 'TYPE_BYTES', 'FP32', 'TYPE_', 'TYPE_fp32', 'TYPE_toString', ''])(
    'rejects config data type %j',
    (name) => expectInvalidArg(() => dataTypeFromConfig(name), `'${name}'`, 'TYPE_STRING'),
  );

  it('knows element sizes and array kinds', () => {
    const sizes = [1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 2, undefined];
    expect(DATA_TYPES.map(elementByteSize)).toEqual(sizes);
    expect(typedArrayConstructor('BOOL')).toBe(Uint8Array);
    expect(typedArrayConstructor('FP16')).toBe(Uint16Array);
    expect(typedArrayConstructor('BF16')).toBe(Uint16Array);
    expect(typedArrayConstructor('INT64')).toBe(BigInt64Array);
    expect(typedArrayConstructor('BYTES')).toBeUndefined();
  });
});
