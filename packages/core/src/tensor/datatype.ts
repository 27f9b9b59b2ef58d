import { InferenceError } from '../errors.js';

/** Triton's wire names for tensor element types, in Triton's order. */
export const DATA_TYPES = [
  'BOOL',
  'UINT8',
  'UINT16',
  'UINT32',
  'UINT64',
  'INT8',
  'INT16',
  'INT32',
  'INT64',
  'FP16',
  'FP32',
  'FP64',
  'BF16',
  'BYTES',
] as const;

export type DataType = (typeof DATA_TYPES)[number];

/** The names model_config.proto uses: `TYPE_` + the wire name, except BYTES, which is TYPE_STRING. */
export type ConfigDataType = `TYPE_${Exclude<DataType, 'BYTES'>}` | 'TYPE_STRING';

/** One BYTES element: a string is sent as its UTF-8 bytes. */
export type BytesElement = string | Uint8Array;

/**
 * The in-memory form of each datatype. BOOL holds 0/1 per byte; FP16 and BF16 hold
 * raw bit patterns (see half.ts), as JavaScript has no 16-bit float array to use on Node 20.
 */
export interface TensorDataMap {
  BOOL: Uint8Array;
  UINT8: Uint8Array;
  UINT16: Uint16Array;
  UINT32: Uint32Array;
  UINT64: BigUint64Array;
  INT8: Int8Array;
  INT16: Int16Array;
  INT32: Int32Array;
  INT64: BigInt64Array;
  FP16: Uint16Array;
  FP32: Float32Array;
  FP64: Float64Array;
  BF16: Uint16Array;
  BYTES: BytesElement[];
}

export type TensorData<T extends DataType = DataType> = TensorDataMap[T];

/** The datatypes whose data is a typed array, i.e. all but BYTES. */
export type FixedSizeDataType = Exclude<DataType, 'BYTES'>;

export type TypedTensorData = TensorData<FixedSizeDataType>;

export interface TypedArrayConstructor {
  new (length: number): TypedTensorData;
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): TypedTensorData;
  readonly name: string;
  readonly BYTES_PER_ELEMENT: number;
}

const TYPED_ARRAYS: { readonly [T in DataType]: T extends FixedSizeDataType ? TypedArrayConstructor : undefined } = {
  BOOL: Uint8Array,
  UINT8: Uint8Array,
  UINT16: Uint16Array,
  UINT32: Uint32Array,
  UINT64: BigUint64Array,
  INT8: Int8Array,
  INT16: Int16Array,
  INT32: Int32Array,
  INT64: BigInt64Array,
  FP16: Uint16Array,
  FP32: Float32Array,
  FP64: Float64Array,
  BF16: Uint16Array,
  BYTES: undefined,
};

export function isDataType(s: string): s is DataType {
  // hasOwn, not `in`: 'toString' must not pass.
  return Object.hasOwn(TYPED_ARRAYS, s);
}

/** The typed array that holds a datatype's data; undefined for BYTES. */
export function typedArrayConstructor(t: DataType): TypedArrayConstructor | undefined {
  return TYPED_ARRAYS[t];
}

/** Bytes per element; undefined for BYTES, whose elements vary in size. */
export function elementByteSize(t: DataType): number | undefined {
  return TYPED_ARRAYS[t]?.BYTES_PER_ELEMENT;
}

export function dataTypeToConfig(t: DataType): ConfigDataType {
  return t === 'BYTES' ? 'TYPE_STRING' : `TYPE_${t}`;
}

/** Reads a config `data_type`; TYPE_INVALID and unknown names are rejected. */
export function dataTypeFromConfig(t: string): DataType {
  if (t === 'TYPE_STRING') return 'BYTES';
  const wire = t.startsWith('TYPE_') ? t.slice(5) : '';
  if (wire !== 'BYTES' && isDataType(wire)) return wire;
  throw new InferenceError(
    'INVALID_ARG',
    `unknown data type '${t}', expected one of ${DATA_TYPES.map(dataTypeToConfig).join(', ')}`,
  );
}
