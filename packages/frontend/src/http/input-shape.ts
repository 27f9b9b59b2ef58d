import { elementByteSize, InferenceError, type DataType } from '@tritium/core';
import { asUint64, describe, invalid } from '../wire-values.js';
import { wrongJsonKind } from './triton-json.js';

const INT64_MAX = 2n ** 63n - 1n;

/**
 * An input's `shape` as Triton's HTTP frontend reads it: an array of unsigned integers
 * whose product, the element count, fits an int64 (Triton's words for each failure).
 * Core then holds each dimension to its own bound.
 */
export function inputShape(name: string, shape: unknown): { shape: number[]; elementCount: bigint } {
  if (!Array.isArray(shape)) {
    throw wrongJsonKind("Unable to parse 'shape'", 'array', `input '${name}' has ${describe(shape)} for its shape`);
  }
  const dims: bigint[] = [];
  for (const [index, dim] of shape.entries()) {
    const value = asUint64(dim);
    if (value === undefined) throw wrongJsonKind("Unable to parse 'shape'", 'unsigned-integer', `input '${name}' dimension ${index} is ${describe(dim)}`);
    dims.push(BigInt(value));
  }
  // Triton's GetElementCount, in its order: a dimension int64 cannot hold, a 0, an overflow.
  let count = 1n;
  for (const dim of dims) {
    if (dim > INT64_MAX) throw invalid(`invalid shape for input '${name}': shape ${shown(dims)} contains one or more invalid dimensions`);
    if (dim === 0n) return { shape: dims.map(Number), elementCount: 0n };
    count *= dim;
    if (count > INT64_MAX) throw invalid(`invalid shape for input '${name}': shape ${shown(dims)} causes total element count to exceed maximum size of ${INT64_MAX}`);
  }
  return { shape: dims.map(Number), elementCount: count };
}

/**
 * Before a JSON input's `data` is converted, as Triton checks it: its size in bytes,
 * from the shape's element `count`, within int64 and within `limit` (--http-max-input-size), and then the
 * number of elements given against the shape (Triton's two texts, exactly, and INTERNAL
 * as Triton makes them: clients match the whole body). BYTES sizes come from the data.
 */
export function checkJsonDataSize(name: string, datatype: DataType, count: bigint, given: number, limit: number): void {
  if (datatype === 'BYTES') return;
  const elementSize = BigInt(elementByteSize(datatype)!);
  const byteSize = count * elementSize;
  if (byteSize > INT64_MAX) {
    throw invalid(`byte size overflow for input '${name}': element count (${count}) * data type size (${elementSize}) exceeds maximum allowed size (${INT64_MAX})`);
  }
  if (byteSize > BigInt(limit)) {
    throw invalid(
      `JSON input '${name}' has a byte_size (${byteSize} bytes) that exceeds the maximum allowed value of ${limit} bytes. Use --http-max-input-size to increase the limit.`,
    );
  }
  if (BigInt(given) < count) throw new InferenceError('INTERNAL', "Failed to parse 'data' field: shape does not match true shape");
  if (BigInt(given) > count) throw new InferenceError('INTERNAL', "Unable to parse 'data': Shape does not match true shape of 'data' field");
}

function shown(dims: readonly bigint[]): string {
  return `[${dims.join(',')}]`;
}
