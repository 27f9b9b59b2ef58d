import { elementCount, shapeToString, typedArrayConstructor, type DataType, type TensorInput } from '@tritium/core';
import { invalid } from '../wire-values.js';
import { countVarints, WIRE_TYPE, WireReader } from './wire-reader.js';

/**
 * InferTensorContents as received: still encoded, a view of the request message
 * (proto-definitions keeps it so), decoded only once its element count fits the shape.
 */
export type EncodedTensorContents = Uint8Array;

type Encoding = 'varint' | 'fixed32' | 'fixed64' | 'bytes';

/**
 * InferTensorContents' fields: how each encodes its elements, and the datatypes it may
 * carry, as Triton reads them; FP16 and BF16 come only as raw bytes.
 */
const FIELDS = [
  { number: 1, name: 'bool_contents', encoding: 'varint', carries: ['BOOL'] },
  { number: 2, name: 'int_contents', encoding: 'varint', carries: ['INT8', 'INT16', 'INT32'] },
  { number: 3, name: 'int64_contents', encoding: 'varint', carries: ['INT64'] },
  { number: 4, name: 'uint_contents', encoding: 'varint', carries: ['UINT8', 'UINT16', 'UINT32'] },
  { number: 5, name: 'uint64_contents', encoding: 'varint', carries: ['UINT64'] },
  { number: 6, name: 'fp32_contents', encoding: 'fixed32', carries: ['FP32'] },
  { number: 7, name: 'fp64_contents', encoding: 'fixed64', carries: ['FP64'] },
  { number: 8, name: 'bytes_contents', encoding: 'bytes', carries: ['BYTES'] },
] as const satisfies readonly { number: number; name: string; encoding: Encoding; carries: readonly DataType[] }[];

type Field = (typeof FIELDS)[number];

const FIELD_NUMBERED: Readonly<Record<number, Field | undefined>> = Object.fromEntries(FIELDS.map((field) => [field.number, field]));

const FIXED_SIZE = { fixed32: 4, fixed64: 8 } as const;

/**
 * An input given as typed values (InferTensorContents) rather than raw bytes. The
 * elements are counted on the wire and checked against the shape before any is decoded;
 * then they are read straight into the datatype's typed array. Narrower types come in
 * wider fields (INT8 in int_contents) and keep their low bytes, as in Triton. Repeated
 * numbers may come packed or not, as protobuf allows. The fields are checked in Triton's
 * order and words: the first one filled must carry the input's datatype, and no other may
 * be filled.
 */
export function tensorFromContents(model: string, name: string, datatype: DataType, shape: number[], contents: EncodedTensorContents): TensorInput {
  const what = `input '${name}': contents`;
  // by field number (FIELDS are numbered 1 to FIELDS.length)
  const counts = new Array<number>(FIELDS.length + 1).fill(0);
  const countOf = (f: Field): number => counts[f.number] ?? 0;
  forEachRun(contents, what, (f, start, end) => (counts[f.number] = countOf(f) + countElements(f.encoding, contents, start, end, what)));
  const [field, second] = FIELDS.filter((f) => countOf(f) > 0);
  const explicit = `unexpected explicit tensor data for input tensor '${name}' for model '${model}'`;
  if (field && !(field.carries as readonly DataType[]).includes(datatype)) {
    const home = FIELDS.find((f) => (f.carries as readonly DataType[]).includes(datatype));
    const where = home ? `${datatype} data belongs in ${home.name}` : `${datatype} data must come in raw_input_contents`;
    // A field that does not carry the datatype is read as its widest type (int_contents as INT32), as Triton reads it.
    throw invalid(`${explicit} of type '${field.carries.at(-1)}', expected datatype '${datatype}' (${where})`);
  }
  if (field && second) throw invalid(`${explicit}, binary data was already supplied. (${field.name} and ${second.name} both hold data)`);
  const count = field ? countOf(field) : 0;
  const expected = elementCount(shape);
  if (count !== expected) {
    throw invalid(`input '${name}': expected ${expected} elements for shape ${shapeToString(shape)}, got ${count}${field ? ` in ${field.name}` : ''}`);
  }
  return { datatype, shape, data: decodeElements(contents, what, field, datatype, count) } as TensorInput;
}

/**
 * Calls `visit` with each run of encoded elements in the contents, in order: a packed
 * field's payload, one unpacked number, or one bytes element. Unknown fields are skipped.
 */
function forEachRun(contents: EncodedTensorContents, what: string, visit: (field: Field, start: number, end: number) => void): void {
  const reader = new WireReader(contents, 0, contents.length, what);
  while (!reader.done) {
    const tag = reader.varint();
    const field = FIELD_NUMBERED[tag >>> 3];
    const wireType = tag & 7;
    const start = reader.pos;
    if (!field) {
      reader.skip(wireType);
    } else if (wireType === WIRE_TYPE.lengthDelimited) {
      const length = reader.length();
      visit(field, reader.pos, reader.pos + length);
      reader.pos += length;
    } else if (field.encoding !== 'bytes' && wireType === WIRE_TYPE[field.encoding]) {
      reader.skip(wireType);
      visit(field, start, reader.pos);
    } else {
      throw reader.malformed(`${field.name} comes with wire type ${wireType}`);
    }
  }
}

/** How many elements a run holds: varints end at a byte without the continuation bit. */
function countElements(encoding: Encoding, bytes: Uint8Array, start: number, end: number, what: string): number {
  if (encoding === 'bytes') return 1;
  if (encoding !== 'varint') {
    const size = FIXED_SIZE[encoding];
    if ((end - start) % size !== 0) throw invalid(`${what} are malformed: a packed run of ${end - start} bytes is not a whole number of ${size}-byte values`);
    return (end - start) / size;
  }
  const last = end > start ? bytes[end - 1] : undefined;
  if (last !== undefined && last & 0x80) throw invalid(`${what} are malformed: a packed run ends inside a varint`);
  return countVarints(bytes, start, end);
}

/** The `count` elements of `field`, read into the datatype's typed array (BYTES: views of the message). */
function decodeElements(contents: EncodedTensorContents, what: string, field: Field | undefined, datatype: DataType, count: number): TensorInput['data'] {
  if (datatype === 'BYTES') {
    const elements: Uint8Array[] = [];
    if (field) forEachRun(contents, what, (f, start, end) => f === field && elements.push(contents.subarray(start, end)));
    return elements;
  }
  const data = new (typedArrayConstructor(datatype)!)(count);
  if (!field) return data;
  const bytes = new Uint8Array(data.buffer);
  // 64-bit elements go in as two 32-bit words (little-endian, as every tensor here is), never as BigInts.
  const words = data.BYTES_PER_ELEMENT === 8 ? new Uint32Array(data.buffer) : undefined;
  const numbers = data as unknown as { [index: number]: number };
  let next = 0;
  forEachRun(contents, what, (f, start, end) => {
    if (f !== field) return;
    if (field.encoding !== 'varint') {
      bytes.set(contents.subarray(start, end), next * data.BYTES_PER_ELEMENT);
      next += (end - start) / data.BYTES_PER_ELEMENT;
      return;
    }
    const reader = new WireReader(contents, start, end, what);
    while (!reader.done) {
      const low = reader.varint();
      if (words) {
        words[2 * next] = low;
        words[2 * next + 1] = reader.high;
      } else {
        numbers[next] = datatype === 'BOOL' ? Number(low !== 0 || reader.high !== 0) : low;
      }
      next++;
    }
  });
  return data;
}
