import { describe, expect, it } from 'vitest';
import { bytesElementToString, deserializeBytesTensor, serializeBytesTensor, serializedBytesSize } from '../../src/tensor/index.js';
import { expectInvalidArg } from './expect-error.js';

const text = (elements: Uint8Array[]) => elements.map(bytesElementToString);

describe('BYTES serialization', () => {
  it('writes a 4-byte little-endian length before each element', () => {
    expect(serializeBytesTensor(['ab', new Uint8Array([7]), ''])).toEqual(
      new Uint8Array([2, 0, 0, 0, 0x61, 0x62, 1, 0, 0, 0, 7, 0, 0, 0, 0]),
    );
    expect(serializeBytesTensor([])).toEqual(new Uint8Array(0));
  });

  it('returns a plain Uint8Array, not a Buffer', () => {
    expect(Object.getPrototypeOf(serializeBytesTensor(['x']))).toBe(Uint8Array.prototype);
  });

  it('round-trips UTF-8 text, empty strings and lengths past one byte', () => {
    const elements = ['', 'hello', 'héllo wörld', '日本語', '🎉 emoji', '', 'x'.repeat(70000), 'a\u0000b'];
    const buffer = serializeBytesTensor(elements);
    expect(buffer.length).toBe(serializedBytesSize(elements));
    expect(text(deserializeBytesTensor(buffer, elements.length))).toEqual(elements);
  });

  it('round-trips binary elements byte for byte', () => {
    const binary = [new Uint8Array([0, 255, 128, 0xc3]), new Uint8Array(0), Uint8Array.from({ length: 256 }, (_, i) => i)];
    expect(deserializeBytesTensor(serializeBytesTensor(binary))).toEqual(binary);
  });

  it('serializes a Uint8Array element that is a view into a larger buffer', () => {
    const view = new Uint8Array([9, 1, 2, 9]).subarray(1, 3);
    expect(deserializeBytesTensor(serializeBytesTensor([view]))).toEqual([new Uint8Array([1, 2])]);
  });

  it('encodes a lone surrogate as U+FFFD, the size counting it the same', () => {
    const elements = ['a\ud800b'];
    const buffer = serializeBytesTensor(elements);
    expect(buffer.length).toBe(serializedBytesSize(elements));
    expect(text(deserializeBytesTensor(buffer))).toEqual(['a\ufffdb']);
  });

  it('reads elements as views into the buffer, at any offset', () => {
    const inner = serializeBytesTensor(['abc', 'de']);
    const outer = new Uint8Array(inner.length + 3);
    outer.set(inner, 3);
    const elements = deserializeBytesTensor(outer.subarray(3));
    expect(text(elements)).toEqual(['abc', 'de']);
    expect(elements[0]!.buffer).toBe(outer.buffer);
  });

  it('reads an empty buffer as no elements', () => {
    expect(deserializeBytesTensor(new Uint8Array(0))).toEqual([]);
    expect(deserializeBytesTensor(new Uint8Array(0), 0)).toEqual([]);
  });

  it('rejects a buffer cut inside a length prefix', () => {
    const buffer = serializeBytesTensor(['ab', 'cd']);
    expectInvalidArg(
      () => deserializeBytesTensor(buffer.subarray(0, 8)),
      'BYTES tensor: truncated: element 1 needs a 4-byte length at byte 6, 2 remain',
    );
  });

  it('rejects a buffer cut inside an element', () => {
    const buffer = serializeBytesTensor(['ab', 'cdef']);
    expectInvalidArg(
      () => deserializeBytesTensor(buffer.subarray(0, buffer.length - 1), undefined, 'OUT'),
      "BYTES tensor 'OUT': truncated: element 1 declares 4 bytes at byte 10, 3 remain",
    );
  });

  it('rejects a length larger than anything that follows', () => {
    expectInvalidArg(() => deserializeBytesTensor(new Uint8Array([0xff, 0xff, 0xff, 0xff, 1])), 'declares 4294967295 bytes');
  });

  it('rejects fewer or more elements than expected', () => {
    const buffer = serializeBytesTensor(['a', 'b', 'c']);
    expectInvalidArg(() => deserializeBytesTensor(buffer, 4, 'X'), "BYTES tensor 'X': expected 4 elements, got 3");
    expectInvalidArg(() => deserializeBytesTensor(buffer, 2), 'expected 2 elements, but 5 bytes follow them');
    expectInvalidArg(() => deserializeBytesTensor(buffer, 0), 'expected 0 elements, but 15 bytes follow them');
  });

  it('turns elements into strings, invalid UTF-8 as U+FFFD', () => {
    expect(bytesElementToString('as is')).toBe('as is');
    expect(bytesElementToString(new Uint8Array([0xe6, 0x97, 0xa5]))).toBe('日');
    expect(bytesElementToString(new Uint8Array([0x61, 0xff]))).toBe('a\ufffd');
  });
});
