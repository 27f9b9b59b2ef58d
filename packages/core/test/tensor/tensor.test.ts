import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { DATA_TYPES, toTensor, typedArrayConstructor } from '../../src/tensor/index.js';
import type { DataType, TensorData, TensorInput } from '../../src/tensor/index.js';
import { expectInvalidArg } from './expect-error.js';

/** Per datatype: canonical data, and plain values that convert to exactly that data. */
const SAMPLES: { readonly [T in DataType]: { canonical: TensorData<T>; plain: readonly unknown[] } } = {
  BOOL: { canonical: new Uint8Array([1, 0, 1, 0]), plain: [true, false, 1, 0] },
  UINT8: { canonical: new Uint8Array([0, 1, 254, 255]), plain: [0, 1, 254, 255] },
  UINT16: { canonical: new Uint16Array([0, 1, 65534, 65535]), plain: [0, 1, 65534, 65535] },
  UINT32: { canonical: new Uint32Array([0, 1, 2 ** 32 - 2, 2 ** 32 - 1]), plain: [0, 1, 2 ** 32 - 2, 2 ** 32 - 1] },
  UINT64: {
    canonical: new BigUint64Array([0n, 1n, 2n ** 64n - 1n, 2n ** 53n - 1n]),
    plain: [0, 1n, 2n ** 64n - 1n, Number.MAX_SAFE_INTEGER],
  },
  INT8: { canonical: new Int8Array([-128, -1, 0, 127]), plain: [-128, -1, 0, 127] },
  INT16: { canonical: new Int16Array([-32768, -1, 0, 32767]), plain: [-32768, -1, 0, 32767] },
  INT32: { canonical: new Int32Array([-(2 ** 31), -1, 0, 2 ** 31 - 1]), plain: [-(2 ** 31), -1, 0, 2 ** 31 - 1] },
  INT64: {
    canonical: new BigInt64Array([-(2n ** 63n), -1n, 2n ** 63n - 1n, -(2n ** 53n) + 1n]),
    plain: [-(2n ** 63n), -1, 2n ** 63n - 1n, Number.MIN_SAFE_INTEGER],
  },
  // FP16/BF16 plain arrays hold values; the typed arrays hold bits.
  FP16: { canonical: new Uint16Array([0x3c00, 0xc000, 0x7c00, 0x8000]), plain: [1, -2, Infinity, -0] },
  FP32: { canonical: new Float32Array([1.5, -2, NaN, 0.1]), plain: [1.5, -2, NaN, 0.1] },
  FP64: { canonical: new Float64Array([1.5, -2, NaN, 0.1]), plain: [1.5, -2, NaN, 0.1] },
  BF16: { canonical: new Uint16Array([0x3f80, 0xc000, 0xff80, 0x3dcd]), plain: [1, -2, -Infinity, 0.1] },
  BYTES: { canonical: ['a', new Uint8Array([0, 255]), '', 'é'], plain: ['a', new Uint8Array([0, 255]), '', 'é'] },
};

/** The same data in memory of a SharedArrayBuffer (BYTES: its Uint8Array elements). */
function sharedCopy(data: TensorData): TensorData {
  const share = (view: ArrayBufferView) => {
    const bytes = new Uint8Array(new SharedArrayBuffer(view.byteLength));
    bytes.set(new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
    return new (view.constructor as new (buffer: ArrayBufferLike) => ArrayBufferView)(bytes.buffer);
  };
  if (Array.isArray(data)) return data.map((element) => (typeof element === 'string' ? element : share(element))) as TensorData;
  return share(data as ArrayBufferView) as TensorData;
}

const input = (datatype: DataType, data: unknown, shape: readonly number[] = [2, 2]) =>
  ({ datatype, shape, data }) as TensorInput;

describe('toTensor', () => {
  describe.each(DATA_TYPES)('%s', (datatype) => {
    const { canonical, plain } = SAMPLES[datatype];

    it('takes canonical data as it is, and a copy of the shape', () => {
      const shape = [2, 2];
      const tensor = toTensor('X', input(datatype, canonical, shape));
      expect(tensor.datatype).toBe(datatype);
      expect(tensor.data).toBe(canonical);
      shape[0] = 4;
      expect(tensor.shape).toEqual([2, 2]);
    });

    it('copies data over a SharedArrayBuffer into a plain ArrayBuffer', () => {
      const shared = sharedCopy(canonical);
      const tensor = toTensor('X', input(datatype, shared));
      expect(tensor.data).toEqual(canonical);
      const views = datatype === 'BYTES' ? (tensor.data as unknown[]).filter(ArrayBuffer.isView) : [tensor.data];
      for (const view of views as ArrayBufferView[]) expect(view.buffer).toBeInstanceOf(ArrayBuffer);
      if (datatype === 'BYTES') expect(tensor.data).not.toBe(shared);
    });

    it('converts a plain array to canonical data', () => {
      const tensor = toTensor('X', input(datatype, Object.freeze([...plain])));
      const kind = typedArrayConstructor(datatype) ?? Array;
      expect(tensor.data).toBeInstanceOf(kind);
      expect(tensor.data).toEqual(canonical);
    });

    it('rejects data of another kind', () => {
      const wrong = typedArrayConstructor(datatype) === Float64Array ? new Float32Array(4) : new Float64Array(4);
      expectInvalidArg(() => toTensor('X', input(datatype, wrong)), "input 'X'", `${datatype} data must be`, 'got Float');
      for (const data of [new DataView(new ArrayBuffer(4)), null, undefined, 'abcd', { length: 4 }, 4]) {
        expectInvalidArg(() => toTensor('X', input(datatype, data)), "input 'X'", `${datatype} data must be`);
      }
    });

    it('checks the element count against the shape', () => {
      expectInvalidArg(
        () => toTensor('X', input(datatype, canonical, [4, 4])),
        "input 'X': expected 16 elements for shape [4,4], got 4",
      );
      expectInvalidArg(() => toTensor('X', input(datatype, plain, [5])), 'expected 5 elements for shape [5], got 4');
    });

    it('accepts empty tensors', () => {
      expect(toTensor('X', input(datatype, [], [0, 3])).data).toHaveLength(0);
    });
  });

  it('names the tensor in the count error', () => {
    expectInvalidArg(
      () => toTensor('INPUT0', { datatype: 'FP32', shape: [4, 4], data: new Float32Array(15) }),
      "input 'INPUT0': expected 16 elements for shape [4,4], got 15",
    );
  });

  it('says output for outputs', () => {
    expectInvalidArg(
      () => toTensor('OUT', { datatype: 'FP32', shape: [2], data: new Float32Array(3) }, 'output'),
      "output 'OUT': expected 2 elements",
    );
  });

  it('takes a scalar shape with one element', () => {
    expect(toTensor('X', { datatype: 'INT32', shape: [], data: [7] }).data).toEqual(new Int32Array([7]));
  });

  it('takes a Node Buffer as UINT8 data', () => {
    const data = Buffer.from([1, 2]);
    expect(toTensor('X', { datatype: 'UINT8', shape: [2], data }).data).toBe(data);
  });

  it('takes typed arrays from another realm', () => {
    const data = runInNewContext('new Float32Array(4)') as Float32Array;
    expect(toTensor('X', input('FP32', data)).data).toBe(data);
  });

  it.each(['FP8', 'fp32', 'TYPE_FP32', 'STRING', 'toString', undefined, 3])('rejects datatype %j', (datatype) => {
    expectInvalidArg(() => toTensor('X', input(datatype as DataType, [1, 2, 3, 4])), "input 'X': unknown datatype", 'BYTES');
  });

  it('keeps the shape it checked, whatever the caller does to its array', () => {
    let reads = 0;
    // A getter that answers 2 when checked and 9 afterwards: only a copy taken first is safe.
    const shape = [0, 2];
    Object.defineProperty(shape, 1, { get: () => (reads++ === 0 ? 2 : 9), enumerable: true });
    const tensor = toTensor('X', { datatype: 'FP32', shape, data: new Float32Array(0) });
    expect(tensor.shape).toEqual([0, 2]);
    expect(tensor.shape).toEqual([0, 2]);
  });

  it.each([[[2 ** 32, 0]], [[0, 2 ** 31]], [[2 ** 53, 0]]])('rejects dims past 2**31-1 even with no elements: %j', (shape) => {
    expectInvalidArg(
      () => toTensor('X', { datatype: 'FP32', shape, data: new Float32Array(0) }),
      "input 'X': shape",
      'non-negative integers up to 2147483647',
    );
  });

  it('takes a dim of 2**31-1 when another is 0', () => {
    expect(toTensor('X', { datatype: 'FP32', shape: [2 ** 31 - 1, 0], data: [] }).shape).toEqual([2 ** 31 - 1, 0]);
  });

  it('rejects a string that is not well-formed Unicode, naming the element', () => {
    for (const lone of ['\ud800', 'a\udc00b', 'x\ud83d']) {
      expectInvalidArg(
        () => toTensor('T', { datatype: 'BYTES', shape: [2], data: ['ok', lone] }),
        "input 'T': BYTES element 1 is not well-formed Unicode",
      );
    }
    expect(toTensor('T', { datatype: 'BYTES', shape: [1], data: ['\ud83d\ude00'] }).data).toEqual(['\ud83d\ude00']);
  });

  it.each([[[-1]], [[1.5]], [[NaN]], [[Infinity]], [['4']], [null], ['4'], [undefined]])('rejects shape %j', (shape) => {
    expectInvalidArg(
      () => toTensor('X', { datatype: 'FP32', shape: shape as number[], data: new Float32Array(4) }),
      "input 'X': shape",
      'non-negative integers',
    );
  });

  it.each([null, undefined, 'x', 3])('rejects %j as a tensor', (value) => {
    expectInvalidArg(() => toTensor('X', value as unknown as TensorInput), "input 'X': expected an object");
  });

  it('rejects BOOL bytes other than 0 and 1', () => {
    expectInvalidArg(
      () => toTensor('X', { datatype: 'BOOL', shape: [3], data: new Uint8Array([0, 1, 2]) }),
      "input 'X': BOOL element 2 is 2, expected 0 or 1",
    );
  });

  it('rejects BYTES elements that are neither strings nor Uint8Arrays', () => {
    for (const element of [1, null, [1], new Uint16Array(1), new Int8Array(1)]) {
      expectInvalidArg(
        () => toTensor('X', { datatype: 'BYTES', shape: [2], data: ['a', element] as string[] }),
        "input 'X': BYTES element 1 must be a string or Uint8Array",
      );
    }
  });

  /** Per datatype: plain values that must be refused, and the expectation the message states. */
  const OUT_OF_RANGE: { readonly [T in Exclude<DataType, 'BYTES'>]: { bad: readonly unknown[]; expected: string } } = {
    BOOL: { bad: [2, -1, 0.5, 'true', null, 1n], expected: 'a boolean (or 0/1)' },
    UINT8: { bad: [-1, 256, 1.5, NaN, Infinity, '1', true, 1n, null], expected: 'an integer in [0, 255]' },
    UINT16: { bad: [-1, 65536, 0.5], expected: 'an integer in [0, 65535]' },
    UINT32: { bad: [-1, 2 ** 32, 0.5], expected: 'an integer in [0, 4294967295]' },
    UINT64: {
      bad: [-1, -1n, 2n ** 64n, 2 ** 53, 0.5, NaN, '1'],
      expected: 'a bigint or safe integer in [0, 18446744073709551615]',
    },
    INT8: { bad: [-129, 128, 0.5], expected: 'an integer in [-128, 127]' },
    INT16: { bad: [-32769, 32768, 0.5], expected: 'an integer in [-32768, 32767]' },
    INT32: { bad: [-(2 ** 31) - 1, 2 ** 31, 0.5], expected: 'an integer in [-2147483648, 2147483647]' },
    INT64: {
      bad: [-(2n ** 63n) - 1n, 2n ** 63n, -(2 ** 53), 2 ** 60, 0.5, Infinity],
      expected: 'a bigint or safe integer in [-9223372036854775808, 9223372036854775807]',
    },
    FP16: { bad: ['1', 1n, null, true], expected: 'a number' },
    FP32: { bad: ['1', 1n, null, undefined], expected: 'a number' },
    FP64: { bad: ['1', 1n, null, {}], expected: 'a number' },
    BF16: { bad: ['1', 1n, null], expected: 'a number' },
  };

  describe.each(Object.entries(OUT_OF_RANGE))('%s plain values', (datatype, { bad, expected }) => {
    it.each(bad.map((value) => [value]))('rejects %s', (value) => {
      expectInvalidArg(
        () => toTensor('X', input(datatype as DataType, [0, 0, 0, value])),
        "input 'X': element 3 is",
        `expected ${expected} for ${datatype}`,
      );
    });
  });

  it('shows a bad shape as given', () => {
    expectInvalidArg(() => toTensor('X', { datatype: 'FP32', shape: ['4', NaN] as unknown as number[], data: [] }), 'shape ["4",NaN] must');
  });

  it('describes refused values readably', () => {
    expectInvalidArg(() => toTensor('X', { datatype: 'INT32', shape: [1], data: ['7'] }), 'element 0 is "7"');
    expectInvalidArg(() => toTensor('X', { datatype: 'INT8', shape: [1], data: [300n] }), 'element 0 is 300n');
  });

  it('rejects holes in plain arrays', () => {
    expectInvalidArg(() => toTensor('X', { datatype: 'FP32', shape: [3], data: [1, , 3] as number[] }), 'element 1 is undefined');
  });
});
