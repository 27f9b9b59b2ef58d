import { InferenceError } from '../errors.js';
import { deserializeBytesTensor, serializeBytesTensor, serializedBytesSize } from './bytes.js';
import { typedArrayConstructor } from './datatype.js';
import type { BytesElement, DataType, TensorData, TypedTensorData } from './datatype.js';
import { elementCount, shapeToString } from './shape.js';
import type { Tensor } from './tensor.js';

// The typed-array union's methods cannot be called directly (their parameter types
// intersect to nothing); every member has these, with elements of its own kind.
interface TypedArrayView {
  readonly length: number;
  set(source: TypedArrayView, offset: number): void;
  subarray(start: number, end: number): TypedArrayView;
}

/** Zero-filled data of `length` elements (empty strings for BYTES), e.g. for an output. */
export function createTensorData<T extends DataType>(datatype: T, length: number): TensorData<T> {
  const TypedArray = typedArrayConstructor(datatype);
  const data: TensorData = TypedArray ? new TypedArray(length) : new Array<BytesElement>(length).fill('');
  return data as TensorData<T>;
}

/**
 * Joins data end to end, e.g. one input of several requests into a batch. A single
 * part is returned as it is, not copied. `allocate` makes the typed array joined into
 * (default: a new one); every element of it is written.
 */
export function concatTensorData<T extends DataType>(
  datatype: T,
  parts: readonly TensorData<T>[],
  allocate: (datatype: T, length: number) => TensorData<T> = createTensorData,
): TensorData<T> {
  if (parts.length === 1) return parts[0]!;
  if (datatype === 'BYTES') return (parts as readonly BytesElement[][]).flat() as TensorData<T>;
  let total = 0;
  for (const part of parts) total += part.length;
  const out = allocate(datatype, total) as unknown as TypedArrayView;
  let offset = 0;
  for (const part of parts as unknown as readonly TypedArrayView[]) {
    out.set(part, offset);
    offset += part.length;
  }
  return out as unknown as TensorData<T>;
}

/**
 * Elements [start, end), e.g. one request's rows of a batch's output. Typed arrays
 * are sliced as views sharing memory; BYTES copies only the array of references.
 */
export function sliceTensorData<T extends DataType>(datatype: T, data: TensorData<T>, start: number, end: number): TensorData<T> {
  const slice = datatype === 'BYTES'
    ? (data as BytesElement[]).slice(start, end)
    : (data as unknown as TypedArrayView).subarray(start, end);
  return slice as unknown as TensorData<T>;
}

/** Bytes the data occupies; for BYTES, its serialized size (with length prefixes). */
export function tensorByteSize(tensor: Tensor): number {
  return tensor.datatype === 'BYTES'
    ? serializedBytesSize(tensor.data as BytesElement[])
    : (tensor.data as TypedTensorData).byteLength;
}

/** A tensor's bytes as they cross to another process or a cache: BYTES in Triton's serialized form, the others as they lie (a view, no copy). */
export function tensorBytes(tensor: Tensor): Uint8Array {
  if (tensor.datatype === 'BYTES') return serializeBytesTensor(tensor.data as BytesElement[]);
  const data = tensor.data as TypedTensorData;
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * The tensor tensorBytes() made. By default in memory of its own (`bytes` may be reused
 * once this returns); `'view'` keeps a view on `bytes` where their alignment allows (a
 * network body the caller hands over), copying only a misaligned one. Bytes that do not
 * fill the shape exactly are INVALID_ARG naming `name`.
 */
export function tensorFromBytes(name: string, datatype: DataType, shape: number[], bytes: Uint8Array, memory: 'copy' | 'view' = 'copy'): Tensor {
  const count = elementCount(shape);
  if (datatype === 'BYTES') return { datatype, shape, data: deserializeBytesTensor(memory === 'copy' ? bytes.slice() : bytes, count, name) };
  const TypedArray = typedArrayConstructor(datatype)!;
  const byteLength = count * TypedArray.BYTES_PER_ELEMENT;
  if (bytes.byteLength !== byteLength) {
    throw new InferenceError('INVALID_ARG', `tensor '${name}' holds ${bytes.byteLength} bytes, but ${datatype} of shape ${shapeToString(shape)} needs ${byteLength}`);
  }
  if (memory === 'view' && bytes.byteOffset % TypedArray.BYTES_PER_ELEMENT === 0) {
    return { datatype, shape, data: new TypedArray(bytes.buffer, bytes.byteOffset, count) } as Tensor;
  }
  const data = createTensorData(datatype, count) as TypedTensorData;
  new Uint8Array(data.buffer).set(bytes);
  return { datatype, shape, data } as Tensor;
}
