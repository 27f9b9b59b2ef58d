import { isSharedArrayBuffer } from 'node:util/types';
import { InferenceError } from '../errors.js';
import { describeValue, typedDataFromArray } from './convert.js';
import { DATA_TYPES, isDataType, typedArrayConstructor } from './datatype.js';
import type { BytesElement, DataType, TensorData, TypedArrayConstructor, TypedTensorData } from './datatype.js';
import { elementCount, isValidShape, MAX_DIM, shapeToString } from './shape.js';
import type { Tensor, TensorInput, TensorRole } from './tensor.js';

/** In a `u` regexp a surrogate pair is one code point, so this finds only unpaired halves. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The one check at the door: datatype known, data of the datatype's kind, shape of
 * integers from 0 to MAX_DIM, and as many elements as the shape holds. Canonical data
 * is used as it is, neither copied nor scanned (except BOOL's 0/1 and BYTES' elements),
 * as this runs on every request; only a view of a SharedArrayBuffer is copied. The
 * shape is copied, so that a caller changing its array later cannot reach a backend.
 */
export function toTensor(name: string, input: TensorInput, role: TensorRole = 'input'): Tensor {
  if (typeof input !== 'object' || input === null) {
    throw invalid(role, name, `expected an object with datatype, shape and data, got ${describeKind(input)}`);
  }
  const { datatype } = input;
  if (!isDataType(datatype)) {
    throw invalid(role, name, `unknown datatype '${String(datatype)}', expected one of ${DATA_TYPES.join(', ')}`);
  }
  // Copied before it is checked, so what was checked is what is kept.
  const shape: unknown = Array.isArray(input.shape) ? [...input.shape] : input.shape;
  if (!isValidShape(shape)) {
    throw invalid(role, name, `shape ${describeShape(shape)} must be an array of non-negative integers up to ${MAX_DIM}`);
  }
  const data = canonicalData(datatype, input.data, role, name);
  const count = elementCount(shape);
  if (data.length !== count) {
    throw invalid(role, name, `expected ${count} elements for shape ${shapeToString(shape)}, got ${data.length}`);
  }
  return { datatype, shape, data };
}

function canonicalData(datatype: DataType, data: unknown, role: TensorRole, name: string): TensorData {
  if (Array.isArray(data)) {
    return datatype === 'BYTES' ? checkBytesElements(data, role, name) : typedDataFromArray(datatype, data, label(role, name));
  }
  const TypedArray = typedArrayConstructor(datatype);
  if (TypedArray !== undefined && isInstance(data, TypedArray)) {
    if (datatype === 'BOOL') checkBoolBytes(data as Uint8Array, role, name);
    return unshared(data as TypedTensorData, TypedArray);
  }
  const expected = TypedArray === undefined ? 'an array of strings and Uint8Arrays' : `a ${TypedArray.name} or a plain array`;
  throw invalid(role, name, `${datatype} data must be ${expected}, got ${typedArrayKind(data) ?? describeKind(data)}`);
}

/** instanceof, or by class name for a typed array made in another realm (a vm context). */
function isInstance(value: unknown, TypedArray: TypedArrayConstructor): boolean {
  return value instanceof TypedArray || typedArrayKind(value) === TypedArray.name;
}

/** A typed array's class name, e.g. 'Float32Array', whichever realm made it. */
function typedArrayKind(value: unknown): string | undefined {
  return ArrayBuffer.isView(value) ? (value as Uint8Array)[Symbol.toStringTag] : undefined;
}

/**
 * Strings must be well-formed Unicode, as bytes must be UTF-8 wherever a backend reads
 * them as text: a lone UTF-16 surrogate has no UTF-8 form and would otherwise become
 * U+FFFD silently. The array is copied only when an element must be.
 */
function checkBytesElements(elements: unknown[], role: TensorRole, name: string): TensorData<'BYTES'> {
  let checked = elements as BytesElement[];
  for (let i = 0; i < elements.length; i++) {
    const element = elements[i];
    if (typeof element === 'string') {
      if (LONE_SURROGATE.test(element)) {
        throw invalid(role, name, `BYTES element ${i} is not well-formed Unicode (it holds a lone UTF-16 surrogate, which has no UTF-8 form)`);
      }
    } else if (isInstance(element, Uint8Array)) {
      const plain = unshared(element as Uint8Array, Uint8Array);
      if (plain !== element) {
        if (checked === elements) checked = [...checked];
        checked[i] = plain;
      }
    } else {
      throw invalid(role, name, `BYTES element ${i} must be a string or Uint8Array, got ${typedArrayKind(element) ?? describeKind(element)}`);
    }
  }
  return checked;
}

/**
 * A copy of a view of a SharedArrayBuffer, made once here: runtimes take only plain
 * ArrayBuffers (onnxruntime, TextDecoder), and another thread could write shared
 * memory while a backend reads it.
 */
function unshared<T extends TypedTensorData>(data: T, TypedArray: TypedArrayConstructor): T {
  const buffer = data.buffer;
  // instanceof first: it settles this realm's plain buffers without a call into the runtime.
  if (buffer instanceof ArrayBuffer || !isSharedArrayBuffer(buffer)) return data;
  // Each typed array has set() for its own kind; the union's signatures do not unify.
  const copy = new TypedArray(data.length) as Uint8Array;
  copy.set(data as Uint8Array);
  return copy as T;
}

/** Backends read BOOL bytes as C++ bools, for which only 0 and 1 are defined. */
function checkBoolBytes(data: Uint8Array, role: TensorRole, name: string): void {
  for (let i = 0; i < data.length; i++) {
    if (data[i]! > 1) throw invalid(role, name, `BOOL element ${i} is ${data[i]}, expected 0 or 1`);
  }
}

function describeKind(value: unknown): string {
  return value === null ? 'null' : typeof value;
}

function describeShape(shape: unknown): string {
  return Array.isArray(shape) ? `[${shape.map(describeValue).join(',')}]` : describeKind(shape);
}

function label(role: TensorRole, name: string): string {
  return `${role} '${name}'`;
}

function invalid(role: TensorRole, name: string, detail: string): InferenceError {
  return new InferenceError('INVALID_ARG', `${label(role, name)}: ${detail}`);
}
