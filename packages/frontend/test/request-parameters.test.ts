import { describe, expect, it } from 'vitest';
import { parameterOptions } from '../src/request-parameters.js';

describe('parameterOptions', () => {
  it('reads the sequence extension, priority and timeout, and passes the rest to the model', () => {
    expect(parameterOptions({ sequence_id: 7, sequence_start: true, priority: 2, timeout: 500, binary_data_output: true, temperature: 0.5, tag: 'x' })).toEqual({
      sequence: { id: 7, start: true, end: false },
      priority: 2,
      timeoutMicroseconds: 500,
      parameters: { temperature: 0.5, tag: 'x' },
    });
  });

  it('takes string and 64-bit correlation ids, and treats 0 or an empty id as none', () => {
    expect(parameterOptions({ sequence_id: 'abc', sequence_end: true }).sequence).toEqual({ id: 'abc', start: false, end: true });
    expect(parameterOptions({ sequence_id: 18446744073709551615n }).sequence?.id).toBe(18446744073709551615n);
    expect(parameterOptions({ sequence_id: 5n }).sequence?.id).toBe(5);
    expect(parameterOptions({ sequence_id: 0 }).sequence).toBeUndefined();
    expect(parameterOptions({ sequence_id: '' }).sequence).toBeUndefined();
    expect(parameterOptions(undefined)).toEqual({});
  });

  it('turns a 64-bit model parameter into a number where it fits and a string where it does not', () => {
    expect(parameterOptions({ a: 3n, b: 2n ** 63n }).parameters).toEqual({ a: 3, b: '9223372036854775808' });
  });

  it.each([
    [{ sequence_id: -1 }, /parameter 'sequence_id' must be a non-negative integer or a string, got -1/],
    [{ sequence_id: 1.5 }, /'sequence_id'/],
    [{ sequence_id: 1, sequence_start: 'yes' }, /parameter 'sequence_start' must be a boolean, got "yes"/],
    [{ sequence_start: true }, /need a non-zero 'sequence_id'/],
    [{ priority: -2 }, /parameter 'priority' must be a non-negative integer, got -2/],
    [{ timeout: 'soon' }, /parameter 'timeout' must be a non-negative integer, got "soon"/],
    [{ nested: { a: 1 } }, /parameter 'nested' must be a string, a number or a boolean/],
  ])('refuses %j with INVALID_ARG', (parameters, message) => {
    expect(() => parameterOptions(parameters)).toThrow(expect.objectContaining({ code: 'INVALID_ARG', message: expect.stringMatching(message) }));
  });
});
