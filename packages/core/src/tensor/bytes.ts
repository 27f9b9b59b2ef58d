import { Buffer } from 'node:buffer';
import { InferenceError } from '../errors.js';
import type { BytesElement } from './datatype.js';

/**
 * Triton's BYTES tensor serialization: each element as a 4-byte little-endian
 * length followed by that many bytes, elements back to back. Strings are UTF-8.
 */

const LENGTH_PREFIX = 4;
const utf8 = new TextDecoder();

/** The serialized size, without serializing. */
export function serializedBytesSize(elements: readonly BytesElement[]): number {
  let size = elements.length * LENGTH_PREFIX;
  for (const element of elements) size += typeof element === 'string' ? Buffer.byteLength(element, 'utf8') : element.length;
  return size;
}

export function serializeBytesTensor(elements: readonly BytesElement[]): Uint8Array {
  const out = new Uint8Array(serializedBytesSize(elements));
  // A Buffer view over `out` for its UTF-8 and little-endian writers; callers get the plain Uint8Array.
  const writer = Buffer.from(out.buffer, out.byteOffset, out.byteLength);
  let offset = 0;
  for (const element of elements) {
    let length: number;
    if (typeof element === 'string') {
      length = writer.write(element, offset + LENGTH_PREFIX, 'utf8');
    } else {
      out.set(element, offset + LENGTH_PREFIX);
      length = element.length;
    }
    writer.writeUInt32LE(length, offset);
    offset += LENGTH_PREFIX + length;
  }
  return out;
}

/**
 * Splits a serialized BYTES tensor into its elements. The elements are views into
 * `buffer` (no copy): copy them if `buffer` is reused. With `expectedCount`, a buffer
 * holding more or fewer elements is an error. `name` names the tensor in errors.
 */
export function deserializeBytesTensor(buffer: Uint8Array, expectedCount?: number, name?: string): Uint8Array[] {
  const fail = (detail: string) =>
    new InferenceError('INVALID_ARG', `BYTES tensor${name === undefined ? '' : ` '${name}'`}: ${detail}`);
  const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const elements: Uint8Array[] = [];
  let offset = 0;
  while (offset < buffer.length) {
    if (elements.length === expectedCount) {
      throw fail(`expected ${expectedCount} elements, but ${buffer.length - offset} bytes follow them`);
    }
    const remaining = buffer.length - offset;
    if (remaining < LENGTH_PREFIX) {
      throw fail(`truncated: element ${elements.length} needs a ${LENGTH_PREFIX}-byte length at byte ${offset}, ${remaining} remain`);
    }
    const length = view.getUint32(offset, true);
    offset += LENGTH_PREFIX;
    if (length > remaining - LENGTH_PREFIX) {
      throw fail(`truncated: element ${elements.length} declares ${length} bytes at byte ${offset}, ${remaining - LENGTH_PREFIX} remain`);
    }
    elements.push(buffer.subarray(offset, offset + length));
    offset += length;
  }
  if (expectedCount !== undefined && elements.length !== expectedCount) {
    throw fail(`expected ${expectedCount} elements, got ${elements.length}`);
  }
  return elements;
}

/** An element as text; invalid UTF-8 becomes U+FFFD rather than an error. */
export function bytesElementToString(element: BytesElement): string {
  return typeof element === 'string' ? element : utf8.decode(element);
}
