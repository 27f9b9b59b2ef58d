import { describe, expect, it } from 'vitest';
import { BytesElementBudget, MAX_BYTES_ELEMENTS } from '../src/bytes-elements.js';

describe('BytesElementBudget', () => {
  it("counts a request's BYTES elements over its inputs from their shapes, refusing the input that passes the limit", () => {
    const budget = new BytesElementBudget();
    budget.take('A', 'BYTES', [MAX_BYTES_ELEMENTS / 2]);
    budget.take('F', 'FP32', [MAX_BYTES_ELEMENTS * 4]);
    budget.take('B', 'BYTES', [2, MAX_BYTES_ELEMENTS / 4]);
    expect(() => budget.take('C', 'BYTES', [1])).toThrow(
      expect.objectContaining({
        code: 'INVALID_ARG',
        message: `input 'C': BYTES of shape [1] brings the request to ${MAX_BYTES_ELEMENTS + 1} BYTES elements, more than the ${MAX_BYTES_ELEMENTS} a request may carry`,
      }),
    );
  });

  it('refuses one input over the limit, however its shape multiplies out', () => {
    expect(() => new BytesElementBudget().take('A', 'BYTES', [2 ** 31 - 1, 2 ** 31 - 1])).toThrow(/input 'A': BYTES of shape \[2147483647,2147483647\]/);
  });
});
