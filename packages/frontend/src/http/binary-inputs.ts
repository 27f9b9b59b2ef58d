import type { Buffer } from 'node:buffer';
import { invalid } from '../wire-values.js';

/**
 * The binary tensor data extension's `Inference-Header-Content-Length`: how many bytes of
 * the body are the JSON request, the rest being input tensors' bytes. Without it the
 * whole body is JSON. 0 means the body is one input's raw bytes, with no JSON at all.
 */
export function inferenceHeaderLength(header: string | string[] | undefined, bodyLength: number): number {
  if (header === undefined) return bodyLength;
  const text = Array.isArray(header) ? header.join(',') : header;
  if (!/^\s*\d+\s*$/.test(text)) throw invalid(`Unable to parse Inference-Header-Content-Length, got: '${text}'`);
  const length = Number(text);
  if (length > bodyLength) {
    throw invalid(`Inference-Header-Content-Length ${length} is more than the ${bodyLength} bytes of the request body`);
  }
  return length;
}

/** Hands out the binary inputs' bytes in the order the JSON lists them, as views on the body (no copy). */
export class BinaryInputs {
  private offset: number;

  constructor(
    private readonly body: Buffer,
    headerLength: number,
    private readonly hasHeader: boolean,
  ) {
    this.offset = headerLength;
  }

  /** `size` is a uint64 as the JSON gave it: a bigint beyond 2^53, which no body holds. */
  next(input: string, size: number | bigint): Uint8Array {
    if (!this.hasHeader) {
      throw invalid(`input '${input}' has 'binary_data_size' but the request has no Inference-Header-Content-Length header to say where the JSON ends`);
    }
    const available = this.body.length - this.offset;
    if (size > available) {
      throw invalid(`unexpected size for input '${input}': its binary_data_size is ${size} bytes but only ${available} remain in the request body`);
    }
    const start = this.offset;
    this.offset += Number(size);
    return this.body.subarray(start, this.offset);
  }

  /** After the last input: bytes that no input claimed mean the sizes do not add up. */
  finish(): void {
    const left = this.body.length - this.offset;
    if (left > 0) throw invalid(`unexpected additional input data: ${left} bytes of the request body follow the binary inputs' binary_data_size`);
  }
}
