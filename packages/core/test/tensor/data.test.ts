import { describe, expect, it } from 'vitest';
import {
  DATA_TYPES,
  concatTensorData,
  createTensorData,
  serializeBytesTensor,
  sliceTensorData,
  tensorByteSize,
  tensorFromBytes,
  toTensor,
  typedArrayConstructor,
} from '../../src/tensor/index.js';
import type { DataType, TensorData } from '../../src/tensor/index.js';

/** Six distinct valid elements of each datatype, as plain values. */
function sample(datatype: DataType): unknown[] {
  if (datatype === 'BYTES') return ['a', new Uint8Array([1, 2]), '', 'dé', new Uint8Array(0), 'f'];
  if (datatype === 'BOOL') return [true, false, false, true, true, false];
  return [0, 1, 2, 3, 4, 5];
}

const data = (datatype: DataType, values: unknown[]) =>
  toTensor('X', { datatype, shape: [values.length], data: values as number[] }).data;

describe.each(DATA_TYPES)('%s data', (datatype) => {
  const whole = data(datatype, sample(datatype));
  const kind = typedArrayConstructor(datatype) ?? Array;

  it('concatenates parts in order', () => {
    const values = sample(datatype);
    const parts = [data(datatype, values.slice(0, 2)), data(datatype, []), data(datatype, values.slice(2))];
    const joined = concatTensorData(datatype, parts);
    expect(joined).toBeInstanceOf(kind);
    expect(joined).toEqual(whole);
    expect(concatTensorData(datatype, [])).toHaveLength(0);
  });

  it('returns a single part as it is', () => {
    expect(concatTensorData(datatype, [whole])).toBe(whole);
  });

  it('slices element ranges', () => {
    const slice = sliceTensorData(datatype, whole, 1, 4);
    expect(slice).toBeInstanceOf(kind);
    expect(slice).toEqual(data(datatype, sample(datatype).slice(1, 4)));
    expect(sliceTensorData(datatype, whole, 6, 6)).toHaveLength(0);
  });

  it('creates zeroed data', () => {
    const created = createTensorData(datatype, 3);
    expect(created).toBeInstanceOf(kind);
    expect(created).toEqual(data(datatype, datatype === 'BYTES' ? ['', '', ''] : [0, 0, 0]));
  });
});

describe('tensor data', () => {
  it('slices typed arrays as views sharing memory', () => {
    const whole = new Float32Array([0, 1, 2, 3]);
    const slice = sliceTensorData('FP32', whole, 1, 3) as Float32Array;
    slice[0] = 42;
    expect(whole[1]).toBe(42);
  });

  it('scatters a gathered batch back to its parts', () => {
    const parts: TensorData<'INT64'>[] = [new BigInt64Array([1n, 2n]), new BigInt64Array([3n]), new BigInt64Array([4n, 5n, 6n])];
    const batch = concatTensorData('INT64', parts);
    let offset = 0;
    for (const part of parts) {
      expect(sliceTensorData('INT64', batch, offset, offset + part.length)).toEqual(part);
      offset += part.length;
    }
  });

  it('sizes tensors in bytes', () => {
    expect(tensorByteSize({ datatype: 'FP32', shape: [2, 3], data: new Float32Array(6) })).toBe(24);
    expect(tensorByteSize({ datatype: 'BOOL', shape: [3], data: new Uint8Array(3) })).toBe(3);
    expect(tensorByteSize({ datatype: 'FP16', shape: [3], data: new Uint16Array(3) })).toBe(6);
    expect(tensorByteSize({ datatype: 'UINT64', shape: [1], data: new BigUint64Array(1) })).toBe(8);
    const bytes = ['ab', 'é', new Uint8Array(5), ''];
    expect(tensorByteSize({ datatype: 'BYTES', shape: [4], data: bytes })).toBe(serializeBytesTensor(bytes).length);
    expect(tensorByteSize({ datatype: 'BYTES', shape: [4], data: bytes })).toBe(4 * 4 + 2 + 2 + 5);
  });

  it('counts a view by its own bytes, not its buffer', () => {
    const view = new Float64Array(10).subarray(2, 5);
    expect(tensorByteSize({ datatype: 'FP64', shape: [3], data: view })).toBe(24);
  });
});

describe('tensorFromBytes', () => {
  const bytes = (values: number[]) => new Uint8Array(Float32Array.from(values).buffer);

  it('copies by default, so the bytes may be reused', () => {
    const source = bytes([1, 2]);
    const tensor = tensorFromBytes('x', 'FP32', [2], source);
    source.fill(0);
    expect(Array.from(tensor.data as Float32Array)).toEqual([1, 2]);
  });

  it("keeps a view on aligned bytes with 'view', and copies misaligned ones", () => {
    const aligned = bytes([1, 2]);
    const view = tensorFromBytes('x', 'FP32', [2], aligned, 'view');
    expect((view.data as Float32Array).buffer).toBe(aligned.buffer);
    const padded = new Uint8Array(9);
    padded.set(bytes([3, 4]), 1);
    const misaligned = tensorFromBytes('x', 'FP32', [2], padded.subarray(1), 'view');
    expect((misaligned.data as Float32Array).buffer).not.toBe(padded.buffer);
    expect(Array.from(misaligned.data as Float32Array)).toEqual([3, 4]);
  });

  it('names the tensor when the bytes do not fill the shape', () => {
    expect(() => tensorFromBytes('x', 'FP32', [3], bytes([1, 2]), 'view')).toThrow(/tensor 'x' holds 8 bytes, but FP32 of shape \[3\] needs 12/);
  });
});
