import { InferenceError } from '../errors.js';
import { createTensorData } from './data.js';
import type { FixedSizeDataType, TypedTensorData } from './datatype.js';
import { float32ToBf16Bits, float32ToFp16Bits } from './half.js';

/**
 * Plain JavaScript arrays, a convenience for callers, converted to a datatype's
 * typed array. Each element is checked, as a typed array would otherwise wrap an
 * out-of-range integer or truncate a fraction without a word.
 */

interface ElementRule {
  /** What an element must be, for error messages. */
  readonly expected: string;
  /** The element as stored, or undefined when it does not fit. */
  convert(value: unknown): number | bigint | undefined;
}

function integers(min: number, max: number): ElementRule {
  return {
    expected: `an integer in [${min}, ${max}]`,
    convert: (v) => (typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? v : undefined),
  };
}

/** Numbers are accepted for 64-bit integers only while exact; larger values need a bigint. */
function bigIntegers(min: bigint, max: bigint): ElementRule {
  return {
    expected: `a bigint or safe integer in [${min}, ${max}]`,
    convert: (v) => {
      const n = typeof v === 'number' && Number.isSafeInteger(v) ? BigInt(v) : v;
      return typeof n === 'bigint' && n >= min && n <= max ? n : undefined;
    },
  };
}

/** Float values; FP16/BF16 store the encoded bit pattern of the value. */
function floats(encode: (x: number) => number): ElementRule {
  return { expected: 'a number', convert: (v) => (typeof v === 'number' ? encode(v) : undefined) };
}

const asIs = (x: number) => x;

const RULES: { readonly [T in FixedSizeDataType]: ElementRule } = {
  BOOL: {
    expected: 'a boolean (or 0/1)',
    convert: (v) => (v === true || v === 1 ? 1 : v === false || v === 0 ? 0 : undefined),
  },
  UINT8: integers(0, 0xff),
  UINT16: integers(0, 0xffff),
  UINT32: integers(0, 0xffffffff),
  UINT64: bigIntegers(0n, 2n ** 64n - 1n),
  INT8: integers(-0x80, 0x7f),
  INT16: integers(-0x8000, 0x7fff),
  INT32: integers(-0x80000000, 0x7fffffff),
  INT64: bigIntegers(-(2n ** 63n), 2n ** 63n - 1n),
  FP16: floats(float32ToFp16Bits),
  FP32: floats(asIs),
  FP64: floats(asIs),
  BF16: floats(float32ToBf16Bits),
};

/** A value as an error message shows it: strings quoted, bigints with their n. */
export function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  return String(value);
}

/** `label` names the tensor in errors, e.g. "input 'INPUT0'". */
export function typedDataFromArray(datatype: FixedSizeDataType, values: readonly unknown[], label: string): TypedTensorData {
  const rule = RULES[datatype];
  const out = createTensorData(datatype, values.length) as Record<number, number | bigint>;
  for (let i = 0; i < values.length; i++) {
    const converted = rule.convert(values[i]);
    if (converted === undefined) {
      throw new InferenceError(
        'INVALID_ARG',
        `${label}: element ${i} is ${describeValue(values[i])}, expected ${rule.expected} for ${datatype}`,
      );
    }
    out[i] = converted;
  }
  return out as TypedTensorData;
}
