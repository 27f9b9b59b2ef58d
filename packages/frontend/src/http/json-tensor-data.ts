import { bytesElementToString, fromBf16, fromFp16, type BytesElement, type Tensor, type TensorInput } from '@tritium/core';
import { describe, invalid } from '../wire-values.js';

/**
 * A JSON tensor's `data` as core takes it: flat as sent, or nested arrays flattened in
 * row-major order. Core checks each element against the datatype (BOOL true/false,
 * BYTES strings, FP16/BF16 as numbers, 64-bit integers while exact in a double).
 */
export function jsonTensorData(where: string, data: unknown): TensorInput['data'] {
  if (!Array.isArray(data)) throw invalid(`${where}: 'data' must be an array, got ${describe(data)}`);
  return (data.some(Array.isArray) ? flatten(data) : data) as TensorInput['data'];
}

/** Nested arrays' elements in row-major order, walked with a stack of its own: a client's nesting may be deeper than the call stack. */
function flatten(data: readonly unknown[]): unknown[] {
  const flat: unknown[] = [];
  const stack: Array<{ readonly array: readonly unknown[]; next: number }> = [{ array: data, next: 0 }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.next === top.array.length) {
      stack.pop();
      continue;
    }
    const element = top.array[top.next++];
    if (Array.isArray(element)) stack.push({ array: element, next: 0 });
    else flat.push(element);
  }
  return flat;
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
