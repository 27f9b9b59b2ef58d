import { InferenceError } from '../errors.js';
import { describeValue, typedDataFromArray } from './convert.js';
import { DATA_TYPES, isDataType, typedArrayConstructor } from './datatype.js';
import type { DataType, TensorData, TypedArrayConstructor } from './datatype.js';
import { elementCount, isValidShape, shapeToString } from './shape.js';

/** A checked tensor: data is the datatype's canonical form and matches the shape. */
export interface Tensor<T extends DataType = DataType> {
  datatype: T;
  shape: number[];
  data: TensorData<T>;
}

/** What a caller may pass: plain arrays are converted to the canonical typed array. */
export interface TensorInput {
  datatype: DataType;
  shape: readonly number[];
  data: TensorData | readonly number[] | readonly bigint[] | readonly boolean[] | readonly string[];
}

/** Whom a tensor belongs to, for error messages. */
export type TensorRole = 'input' | 'output';

/**
 * The one check at the door: datatype known, data of the datatype's kind, shape of
 * non-negative integers, and as many elements as the shape holds. Canonical data is
 * used as it is, neither copied nor scanned (except BOOL's 0/1 and BYTES' element
 * kinds), as this runs on every request; the tensor shares the caller's shape and data.
 */
export function toTensor(name: string, input: TensorInput, role: TensorRole = 'input'): Tensor {
  if (typeof input !== 'object' || input === null) {
    throw invalid(role, name, `expected an object with datatype, shape and data, got ${describeKind(input)}`);
  }
  const { datatype, shape } = input;
  if (!isDataType(datatype)) {
    throw invalid(role, name, `unknown datatype '${String(datatype)}', expected one of ${DATA_TYPES.join(', ')}`);
  }
  if (!isValidShape(shape)) {
    throw invalid(role, name, `shape ${describeShape(shape)} must be an array of non-negative integers`);
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
    return data as TensorData;
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

function checkBytesElements(elements: unknown[], role: TensorRole, name: string): TensorData<'BYTES'> {
  for (let i = 0; i < elements.length; i++) {
    const element = elements[i];
    if (typeof element !== 'string' && !isInstance(element, Uint8Array)) {
      throw invalid(role, name, `BYTES element ${i} must be a string or Uint8Array, got ${typedArrayKind(element) ?? describeKind(element)}`);
    }
  }
  return elements as TensorData<'BYTES'>;
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
