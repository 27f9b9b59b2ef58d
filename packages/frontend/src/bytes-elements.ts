import { elementCount, shapeToString, type DataType } from '@tritium/core';
import { invalid } from './wire-values.js';

/**
 * The most BYTES elements one request may carry, over all its inputs. Decoding makes
 * each element an object of its own (about 100 bytes whatever its length), so a body
 * of empty elements would grow some 25-fold in memory; the shapes say how many there
 * are before any is decoded. Triton has no such limit: its elements stay in the
 * request's buffer.
 */
export const MAX_BYTES_ELEMENTS = 1_000_000;

/**
 * Counts one request's BYTES elements from its inputs' shapes, input by input before
 * each is decoded, and refuses the input that takes the request over MAX_BYTES_ELEMENTS.
 */
export class BytesElementBudget {
  private total = 0;

  take(input: string, datatype: DataType, shape: readonly number[]): void {
    if (datatype !== 'BYTES') return;
    this.total += elementCount(shape);
    if (this.total > MAX_BYTES_ELEMENTS) {
      throw invalid(
        `input '${input}': BYTES of shape ${shapeToString(shape)} brings the request to ${this.total} BYTES elements, more than the ${MAX_BYTES_ELEMENTS} a request may carry`,
      );
    }
  }
}
