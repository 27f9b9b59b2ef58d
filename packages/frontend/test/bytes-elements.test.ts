import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { BYTES_ELEMENT_HEAP_BYTES, BYTES_ELEMENTS_HEAP_BUDGET, BytesElementBudget, MAX_BYTES_ELEMENTS } from '../src/bytes-elements.js';

describe('BytesElementBudget', () => {
  it('allows the BYTES elements that take a third of the heap limit once decoded', () => {
    expect(BYTES_ELEMENTS_HEAP_BUDGET).toBe(Math.floor(getHeapStatistics().heap_size_limit / 3));
    expect(MAX_BYTES_ELEMENTS).toBe(Math.floor(BYTES_ELEMENTS_HEAP_BUDGET / BYTES_ELEMENT_HEAP_BYTES));
  });

  it("counts a request's BYTES elements over its inputs from their shapes, refusing the input that passes the limit, saying why", () => {
    const budget = new BytesElementBudget();
    const quarter = Math.floor(MAX_BYTES_ELEMENTS / 4);
    budget.take('A', 'BYTES', [2 * quarter]);
    budget.take('F', 'FP32', [MAX_BYTES_ELEMENTS * 4]);
    budget.take('B', 'BYTES', [2, quarter]);
    budget.take('C', 'BYTES', [MAX_BYTES_ELEMENTS - 4 * quarter]);
    const mib = Math.floor(BYTES_ELEMENTS_HEAP_BUDGET / 2 ** 20);
    expect(() => budget.take('D', 'BYTES', [1])).toThrow(
      expect.objectContaining({
        code: 'INVALID_ARG',
        message:
          `input 'D': BYTES of shape [1] brings the request to ${MAX_BYTES_ELEMENTS + 1} BYTES elements, more than the ${MAX_BYTES_ELEMENTS} a request may carry ` +
          `(about 104 bytes of heap each once decoded, and a request may take ${mib} MiB, a third of the heap limit)`,
      }),
    );
  });

  it('refuses one input over the limit, however its shape multiplies out', () => {
    expect(() => new BytesElementBudget().take('A', 'BYTES', [2 ** 31 - 1, 2 ** 31 - 1])).toThrow(/input 'A': BYTES of shape \[2147483647,2147483647\]/);
  });

  it.skipIf(getHeapStatistics().heap_size_limit < 4096 * 2 ** 20)("takes Triton's 10,485,760-element request at Node's default heap limit on a large host", () => {
    expect(() => new BytesElementBudget().take('INPUT0', 'BYTES', [10_485_760])).not.toThrow();
  });
});
