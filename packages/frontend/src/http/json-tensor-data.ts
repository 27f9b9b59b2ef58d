import { bytesElementToString, fromBf16, fromFp16, type BytesElement, type Tensor, type TensorInput } from '@tritium/core';
import { invalid } from './http-errors.js';
import { describe } from './request-json.js';

/**
 * A JSON tensor's `data` as core takes it: flat as sent, or nested arrays flattened in
 * row-major order. Core checks each element against the datatype (BOOL true/false,
 * BYTES strings, FP16/BF16 as numbers, 64-bit integers while exact in a double).
 */
export function jsonTensorData(where: string, data: unknown): TensorInput['data'] {
  if (!Array.isArray(data)) throw invalid(`${where}: 'data' must be an array, got ${describe(data)}`);
  return data.some(Array.isArray) ? data.flat(Infinity) : data;
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
  let text = '[';
  for (let i = 0; i < elements.length; i++) text += (i ? ',' : '') + JSON.stringify(bytesElementToString(elements[i]!));
  return `${text}]`;
}
