import { getHeapStatistics } from 'node:v8';
import { elementCount, shapeToString, type DataType } from '@tritium/core';
import { invalid } from './wire-values.js';

/**
 * What one BYTES element costs on the JavaScript heap once decoded, whatever its length:
 * a Uint8Array view of the received message and its slot in the tensor's array (measured
 * on Node 20). Its bytes stay in the message, which the size limits bound already.
 */
export const BYTES_ELEMENT_HEAP_BYTES = 104;

/**
 * The heap one request's BYTES elements may take once decoded: a third of the heap limit,
 * so that a request's inputs and the outputs an identity model gives back (as many
 * again) fit together beside everything else; a body of empty elements would otherwise
 * grow some 25-fold in memory. At Node's largest default limit (about 4 GiB, on hosts of
 * 16 GiB or more) Triton's 10,485,760-element test passes; --max-old-space-size moves the
 * budget with the heap.
 */
export const BYTES_ELEMENTS_HEAP_BUDGET = Math.floor(getHeapStatistics().heap_size_limit / 3);

/** The most BYTES elements one request may carry, over all its inputs. Triton has no such limit: its elements stay in the request's buffer. */
export const MAX_BYTES_ELEMENTS = Math.floor(BYTES_ELEMENTS_HEAP_BUDGET / BYTES_ELEMENT_HEAP_BYTES);

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
        `input '${input}': BYTES of shape ${shapeToString(shape)} brings the request to ${this.total} BYTES elements, more than the ${MAX_BYTES_ELEMENTS} a request may carry ` +
          `(about ${BYTES_ELEMENT_HEAP_BYTES} bytes of heap each once decoded, and a request may take ${Math.floor(BYTES_ELEMENTS_HEAP_BUDGET / 2 ** 20)} MiB, a third of the heap limit)`,
      );
    }
  }
}
