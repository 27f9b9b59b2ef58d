import type { DataType, Tensor } from '@tritium/core';
import { invalid } from './wire-values.js';

/** The datatypes Triton classifies: integers print as they are, floats as C's `%f`. */
const INTEGERS = new Set<DataType>(['UINT8', 'UINT16', 'UINT32', 'UINT64', 'INT8', 'INT16', 'INT32', 'INT64']);
const FLOATS = new Set<DataType>(['FP32', 'FP64']);

/**
 * Triton's classification extension: for each batch entry (the whole tensor of a model
 * without batching, or of an empty batch), the `count` largest values as
 * "value:index" strings, with ":label" where the output has a label for that index.
 * Only the integer types and FP32/FP64 are classified, as in Triton.
 */
export function classify(name: string, tensor: Tensor, count: number, batched: boolean, labels: readonly string[] | undefined): Tensor<'BYTES'> {
  const { datatype } = tensor;
  const print = INTEGERS.has(datatype) ? String : FLOATS.has(datatype) ? printfFixed : undefined;
  if (!print) throw invalid(`class result not available for output '${name}' due to unsupported type '${datatype}'`);
  // Typed arrays: numbers, or bigints for the 64-bit integers (compared and printed exactly).
  const values = tensor.data as ArrayLike<number | bigint>;
  const batchSize = batched ? (tensor.shape[0] ?? 0) : 0;
  const classes = batchSize > 0 ? values.length / batchSize : values.length;
  const k = Math.min(count, classes);
  const data: string[] = [];
  for (let row = 0; row < Math.max(1, batchSize); row++) {
    const base = row * classes;
    const order = Array.from({ length: classes }, (_, i) => i);
    // Largest first; ties keep the lower index first, so the order is stable.
    order.sort((a, b) => (values[base + b]! > values[base + a]! ? 1 : values[base + b]! < values[base + a]! ? -1 : a - b));
    for (const index of order.slice(0, k)) {
      const label = labels?.[index];
      data.push(`${print(values[base + index] as number)}:${index}${label ? `:${label}` : ''}`);
    }
  }
  return { datatype: 'BYTES', shape: batchSize > 0 ? [batchSize, k] : [k], data };
}

/**
 * C's printf `%f`, as Triton prints a float class value: six decimals rounded half to
 * even on the exact binary value, every digit of a large value, "nan" and "inf".
 */
function printfFixed(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  const sign = value < 0 || Object.is(value, -0) ? '-' : '';
  const magnitude = Math.abs(value);
  if (magnitude === Infinity) return `${sign}inf`;
  // toFixed writes an exponent from 1e21 on, where every double is an integer.
  if (magnitude >= 1e21) return `${sign}${BigInt(magnitude)}.000000`;
  // toFixed rounds an exact tie away from zero; C to the even digit. A double ties at the
  // seventh decimal only when it is an odd number of 128ths.
  const scaled = magnitude * 128;
  if (Number.isInteger(scaled) && scaled % 2 === 1) {
    const down = magnitude.toFixed(7).slice(0, -1);
    if (Number(down.at(-1)) % 2 === 0) return sign + down;
  }
  return sign + magnitude.toFixed(6);
}
