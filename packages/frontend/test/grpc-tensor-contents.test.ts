import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { InferenceError, type DataType } from '@tritium/core';
import { tensorFromContents } from '../src/grpc/tensor-contents.js';

type WriterMethod = 'bool' | 'int32' | 'int64' | 'uint32' | 'uint64' | 'float' | 'double';

/** Each numeric field of InferTensorContents: its number, its wire type unpacked, and the Writer method for one value. */
const FIELDS = {
  bool_contents: [1, 0, 'bool'],
  int_contents: [2, 0, 'int32'],
  int64_contents: [3, 0, 'int64'],
  uint_contents: [4, 0, 'uint32'],
  uint64_contents: [5, 0, 'uint64'],
  fp32_contents: [6, 5, 'float'],
  fp64_contents: [7, 1, 'double'],
} as const satisfies Record<string, readonly [number, number, WriterMethod]>;

type NumericField = keyof typeof FIELDS;

/** InferTensorContents holding `values` in `field`, packed (as protobuf writes proto3) or one tagged value each (as protobuf must also read). */
function encode(field: NumericField, values: readonly unknown[], packed: boolean): Uint8Array {
  const [number, wireType, method] = FIELDS[field];
  const writer = protobuf.Writer.create();
  const write = (value: unknown) => (writer[method] as (v: unknown) => protobuf.Writer).call(writer, value);
  if (packed) {
    writer.uint32((number << 3) | 2).fork();
    values.forEach(write);
    writer.ldelim();
  } else {
    for (const value of values) {
      writer.uint32((number << 3) | wireType);
      write(value);
    }
  }
  return writer.finish();
}

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InferenceError);
    expect((error as InferenceError).code).toBe('INVALID_ARG');
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

const CASES: [DataType, NumericField, unknown[], unknown[]][] = [
  ['BOOL', 'bool_contents', [true, false, true], [1, 0, 1]],
  ['INT8', 'int_contents', [-128, 127, 0], [-128, 127, 0]],
  ['INT16', 'int_contents', [-32768, 32767, 1], [-32768, 32767, 1]],
  ['INT32', 'int_contents', [-2147483648, 2147483647, -1], [-2147483648, 2147483647, -1]],
  ['INT64', 'int64_contents', ['-9223372036854775808', '9223372036854775807', '-1'], [-9223372036854775808n, 9223372036854775807n, -1n]],
  ['UINT8', 'uint_contents', [0, 255, 1], [0, 255, 1]],
  ['UINT16', 'uint_contents', [0, 65535, 1], [0, 65535, 1]],
  ['UINT32', 'uint_contents', [0, 4294967295, 1], [0, 4294967295, 1]],
  ['UINT64', 'uint64_contents', ['0', '18446744073709551615', '4294967296'], [0n, 18446744073709551615n, 4294967296n]],
  ['FP32', 'fp32_contents', [1.5, -2, Infinity], [1.5, -2, Infinity]],
  ['FP64', 'fp64_contents', [0.1, 1e300, -0], [0.1, 1e300, -0]],
];

describe('typed contents read from the wire', () => {
  it.each(CASES.flatMap(([datatype, field, sent, expected]) => [true, false].map((packed) => [datatype, field, packed, sent, expected] as const)))(
    'reads %s from %s (packed: %s) into its typed array',
    (datatype, field, packed, sent, expected) => {
      const tensor = tensorFromContents('m', 'IN', datatype, [3], encode(field, sent, packed));
      expect(ArrayBuffer.isView(tensor.data)).toBe(true);
      expect(Array.from(tensor.data as ArrayLike<unknown>)).toEqual(expected);
    },
  );

  it('joins runs of one field, packed and not, and skips unknown fields', () => {
    const unknown = protobuf.Writer.create().uint32((20 << 3) | 0).uint32(7).uint32((21 << 3) | 2).bytes(Buffer.from('skip')).finish();
    const contents = Buffer.concat([encode('int_contents', [1, 2], true), unknown, encode('int_contents', [3], false), encode('int_contents', [4, 5], true)]);
    expect(Array.from(tensorFromContents('m', 'IN', 'INT32', [5], contents).data as Int32Array)).toEqual([1, 2, 3, 4, 5]);
  });

  it('keeps BYTES elements as views of the message', () => {
    const contents = protobuf.Writer.create().uint32((8 << 3) | 2).bytes(Buffer.from('ab')).uint32((8 << 3) | 2).bytes(Buffer.alloc(0)).finish();
    const tensor = tensorFromContents('m', 'IN', 'BYTES', [2], contents);
    expect((tensor.data as Uint8Array[]).map((e) => Buffer.from(e).toString())).toEqual(['ab', '']);
    expect((tensor.data as Uint8Array[])[0]!.buffer).toBe(contents.buffer);
  });

  it('takes empty contents for a shape with no elements', () => {
    expect((tensorFromContents('m', 'IN', 'FP32', [0, 3], new Uint8Array(0)).data as Float32Array).length).toBe(0);
  });

  it('refuses a count that disagrees with the shape, naming the input and field', () => {
    expect(refusal(() => tensorFromContents('m', 'IN', 'BOOL', [2, 2], encode('bool_contents', [1, 0, 1, 0, 1], true)))).toBe("input 'IN': expected 4 elements for shape [2,2], got 5 in bool_contents");
    expect(refusal(() => tensorFromContents('m', 'IN', 'FP32', [4], new Uint8Array(0)))).toBe("input 'IN': expected 4 elements for shape [4], got 0");
  });

  it('refuses a varint longer than 10 bytes, packed or not (protobuf allows 10, as for a negative int32)', () => {
    const elevenBytes = [...Array<number>(10).fill(0xff), 0x01];
    const why = "input 'IN': contents are malformed: a varint runs past 10 bytes";
    expect(refusal(() => tensorFromContents('m', 'IN', 'INT32', [1], Uint8Array.from([(2 << 3) | 2, 11, ...elevenBytes])))).toBe(why);
    expect(refusal(() => tensorFromContents('m', 'IN', 'INT32', [1], Uint8Array.from([(2 << 3) | 0, ...elevenBytes])))).toBe(why);
  });

  it.each([
    ['a packed run that ends inside a varint', [(1 << 3) | 2, 2, 1, 0x80], 'a packed run ends inside a varint'],
    ['a packed fp32 run of 5 bytes', [(6 << 3) | 2, 5, 0, 0, 0, 0, 0], 'a packed run of 5 bytes is not a whole number of 4-byte values'],
    ['a length past the end', [(6 << 3) | 2, 10, 0, 0], 'a length runs past the end'],
    ['a varint past the end', [(2 << 3) | 0, 0x80], 'a varint runs past the end'],
    ['fp32_contents as a varint', [(6 << 3) | 0, 1], 'fp32_contents comes with wire type 0'],
    ['bytes_contents as a varint', [(8 << 3) | 0, 1], 'bytes_contents comes with wire type 0'],
    ['an unknown group', [(9 << 3) | 3], 'wire type 3 is not expected here'],
  ])('refuses %s as malformed', (_case, bytes, why) => {
    expect(refusal(() => tensorFromContents('m', 'IN', 'FP32', [1], Uint8Array.from(bytes)))).toBe(`input 'IN': contents are malformed: ${why}`);
  });
});
