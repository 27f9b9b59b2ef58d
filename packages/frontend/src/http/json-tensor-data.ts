import { endianness } from 'node:os';
import { setImmediate as nextTurn } from 'node:timers/promises';
import {
  bytesElementToString,
  fromBf16,
  fromFp16,
  createTensorData,
  elementByteSize,
  toBf16,
  toFp16,
  type BytesElement,
  type DataType,
  type InferenceError,
  type Tensor,
  type TensorInput,
  type TypedTensorData,
} from '@tritium/core';
import { describe, invalid } from '../wire-values.js';
import { FlatTensorValues } from './flat-tensor-values.js';
import { wrongJsonKind } from './triton-json.js';

/**
 * A JSON tensor's `data` (flattened by the parser) as core takes it. Numbers become the
 * datatype's typed array here, block by block, each checked to fit as core checks them
 * (without a JavaScript value per element, which a large tensor would make slow); BOOL
 * booleans become its bytes. Anything else (BYTES strings, bigints, mixed elements) goes to
 * core as a plain array, which core checks element by element.
 */
export async function jsonTensorData(where: string, datatype: DataType, data: unknown): Promise<TensorInput['data']> {
  if (!(data instanceof FlatTensorValues)) throw invalid(`${where}: 'data' must be an array, got ${describe(data)}`);
  const blocks = data.numberBlocks();
  if (blocks && datatype !== 'BYTES') return fromNumbers(where, datatype, blocks, data.length);
  const booleans = data.asBooleans();
  if (booleans && datatype === 'BOOL') return booleans;
  // Numbers for BYTES, or booleans for another datatype: element 0 is of the wrong kind.
  if ((blocks || booleans) && data.length > 0) throw wrongKind(where, datatype, 0, data.first());
  const list = data.toArray();
  const wrong = list.findIndex((value) => !isOfKind(datatype, value));
  if (wrong !== -1) throw wrongKind(where, datatype, wrong, list[wrong]);
  // A float tensor takes an integer beyond 2^53 as the nearest double, as Triton does.
  const elements = data.hasBigInt && isFloat(datatype) ? list.map((value) => (typeof value === 'bigint' ? Number(value) : value)) : list;
  return elements as TensorInput['data'];
}

/** Whether an element is of the JSON kind the datatype takes (BOOL takes 0 and 1 too); core checks its value. */
function isOfKind(datatype: DataType, value: unknown): boolean {
  if (datatype === 'BYTES') return typeof value === 'string';
  return typeof value === 'number' || typeof value === 'bigint' || (datatype === 'BOOL' && typeof value === 'boolean');
}

/** Triton's words for an element of the wrong kind: a BYTES one as its size count meets it, another as its 'data' read does. */
function wrongKind(where: string, datatype: DataType, index: number, value: unknown): InferenceError {
  const detail = `${where} element ${index} is ${describe(value)}`;
  if (datatype === 'BYTES') return wrongJsonKind(undefined, 'string', detail);
  const kind = datatype === 'BOOL' ? 'boolean' : isFloat(datatype) ? 'number' : datatype.startsWith('U') ? 'unsigned-integer' : 'signed-integer';
  return wrongJsonKind("Unable to parse 'data'", kind, detail);
}

function isFloat(datatype: DataType): boolean {
  return datatype === 'FP16' || datatype === 'BF16' || datatype === 'FP32' || datatype === 'FP64';
}

const LITTLE_ENDIAN = endianness() === 'LE';

type FixedSize = Exclude<DataType, 'BYTES'>;

/** Blocks converted between turns of the event loop: about a millisecond's work, so that a large tensor holds up no other client. */
const BLOCKS_PER_TURN = 4;

/** The datatype's typed array of `length` numbers, given in blocks. */
async function fromNumbers(where: string, datatype: FixedSize, blocks: readonly Float64Array[], length: number): Promise<TypedTensorData> {
  const out = createTensorData(datatype, length);
  let offset = 0;
  for (const [index, block] of blocks.entries()) {
    if (index > 0 && index % BLOCKS_PER_TURN === 0) await nextTurn();
    switch (datatype) {
      case 'FP32':
      case 'FP64':
        (out as Float64Array).set(block, offset);
        break;
      case 'FP16':
      case 'BF16':
        (out as Uint16Array).set(datatype === 'FP16' ? toFp16(block) : toBf16(block), offset);
        break;
      case 'INT64':
      case 'UINT64':
        writeInt64s(where, datatype, block, out as BigInt64Array, offset);
        break;
      default:
        writeIntegers(where, datatype, block, out as Int32Array, offset);
    }
    offset += block.length;
  }
  return out;
}

/** Integers up to 32 bits (and BOOL's 0/1): a typed array stores one that fits as it is, and wraps or truncates any other. */
function writeIntegers(where: string, datatype: FixedSize, block: Float64Array, out: Int32Array, offset: number): void {
  for (let i = 0; i < block.length; i++) {
    const value = block[i]!;
    out[offset + i] = value;
    if (out[offset + i] !== value || (datatype === 'BOOL' && value > 1)) throw elementError(where, datatype, offset + i, value);
  }
}

/** 64-bit integers written as two 32-bit words each, as a bigint per element would cost an allocation. */
function writeInt64s(where: string, datatype: 'INT64' | 'UINT64', block: Float64Array, out: BigInt64Array, offset: number): void {
  const words = new Uint32Array(out.buffer, out.byteOffset + offset * 8, block.length * 2);
  const [low, high] = LITTLE_ENDIAN ? [0, 1] : [1, 0];
  for (let i = 0; i < block.length; i++) {
    const value = block[i]!;
    if (!Number.isSafeInteger(value) || (datatype === 'UINT64' && value < 0)) throw elementError(where, datatype, offset + i, value);
    words[2 * i + low] = value >>> 0;
    words[2 * i + high] = Math.floor(value / 2 ** 32);
  }
}

/** As core words it for a plain array's element. */
function elementError(where: string, datatype: FixedSize, index: number, value: number) {
  // TritonJson's words (generate's {"STREAM": 123} meets them); Tritium takes 0 and 1 as well.
  if (datatype === 'BOOL') return wrongJsonKind("Unable to parse 'data'", 'boolean', `${where} element ${index} is ${value} (0 and 1 are taken too)`);
  const bits = elementByteSize(datatype)! * 8;
  const [min, max] = datatype.startsWith('U') ? [0n, 2n ** BigInt(bits) - 1n] : [-(2n ** BigInt(bits - 1)), 2n ** BigInt(bits - 1) - 1n];
  const expected = bits === 64 ? 'a bigint or safe integer' : 'an integer';
  return invalid(`${where}: element ${index} is ${value}, expected ${expected} in [${min}, ${max}] for ${datatype}`);
}

/**
 * A tensor's data as JSON text, flat, written straight from the typed array: numbers
 * as JavaScript prints them (a float32 as the double it equals, as Triton writes it),
 * BOOL as true/false, BYTES as strings, FP16/BF16 decoded to numbers. JSON has no NaN
 * or infinities: those elements are null.
 */
export function jsonDataText(tensor: Tensor): string {
  switch (tensor.datatype) {
    case 'BYTES':
      return bytesText(tensor.data as BytesElement[]);
    case 'BOOL':
      return boolText(tensor.data as Uint8Array);
    case 'FP16':
      return floatText(fromFp16(tensor.data as Uint16Array));
    case 'BF16':
      return floatText(fromBf16(tensor.data as Uint16Array));
    case 'FP32':
    case 'FP64':
      return floatText(tensor.data as Float32Array | Float64Array);
    default:
      return `[${(tensor.data as Int32Array).join(',')}]`;
  }
}

function floatText(values: Float32Array | Float64Array): string {
  const text = `[${values.join(',')}]`;
  // Only NaN and ±Infinity print with these letters; checking the text is cheaper than each element.
  return text.includes('N') || text.includes('I') ? JSON.stringify(Array.from(values)) : text;
}

function boolText(values: Uint8Array): string {
  let text = '[';
  for (let i = 0; i < values.length; i++) text += (i ? ',' : '') + (values[i] ? 'true' : 'false');
  return `${text}]`;
}

function bytesText(elements: readonly BytesElement[]): string {
  return `[${elements.map((element) => JSON.stringify(bytesElementToString(element))).join(',')}]`;
}
