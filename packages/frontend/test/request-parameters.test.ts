import { describe, expect, it } from 'vitest';
import { EMPTY_FINAL_RESPONSE, parameterOptions } from '../src/request-parameters.js';

describe('parameterOptions', () => {
  it('reads the sequence extension, priority and timeout, and passes the rest to the model', () => {
    expect(parameterOptions({ sequence_id: 7, sequence_start: true, priority: 2, timeout: 500, temperature: 0.5, tag: 'x' })).toEqual({
      sequence: { id: 7, start: true, end: false },
      priority: 2,
      timeoutMicroseconds: 500,
      parameters: { temperature: 0.5, tag: 'x' },
    });
  });

  it("passes binary_data_output to the model unless the protocol reads it itself (HTTP's own), and never the empty-final-response flag", () => {
    expect(parameterOptions({ binary_data_output: true, [EMPTY_FINAL_RESPONSE]: true }).parameters).toEqual({ binary_data_output: true });
    expect(parameterOptions({ binary_data_output: true, tag: 'x' }, ['binary_data_output']).parameters).toEqual({ tag: 'x' });
  });

  it('passes parameters named __proto__ and constructor as ordinary ones, touching no prototype', () => {
    const passed = parameterOptions(JSON.parse('{"__proto__": "x", "constructor": 1}') as Record<string, unknown>).parameters!;
    expect(Object.entries(passed)).toEqual([
      ['__proto__', 'x'],
      ['constructor', 1],
    ]);
    expect(Object.getPrototypeOf(passed)).toBeNull();
  });

  it('takes string and 64-bit correlation ids, and treats 0 or an empty id as none', () => {
    expect(parameterOptions({ sequence_id: 'abc', sequence_end: true }).sequence).toEqual({ id: 'abc', start: false, end: true });
    expect(parameterOptions({ sequence_id: 18446744073709551615n }).sequence?.id).toBe(18446744073709551615n);
    expect(parameterOptions({ sequence_id: 5n }).sequence?.id).toBe(5);
    expect(parameterOptions({ sequence_id: 0 }).sequence).toBeUndefined();
    expect(parameterOptions({ sequence_id: '' }).sequence).toBeUndefined();
    expect(parameterOptions(undefined)).toEqual({});
  });

  it('takes priority and timeout up to 2^64-1, a value beyond 2^53 acting as 2^53-1 (above any priority level, a timeout never reached)', () => {
    expect(parameterOptions({ priority: 18446744073709551615n, timeout: 9007199254740993n })).toEqual({ priority: Number.MAX_SAFE_INTEGER, timeoutMicroseconds: Number.MAX_SAFE_INTEGER });
    expect(parameterOptions({ priority: 3n, timeout: 9007199254740991n })).toEqual({ priority: 3, timeoutMicroseconds: 9007199254740991 });
  });

  it('refuses a uint64 beyond 2^64-1 or below 0 as JSON gives it (a bigint), naming the parameter', () => {
    const cases: Array<[Record<string, bigint>, string]> = [
      [{ sequence_id: 2n ** 64n }, "parameter 'sequence_id' must be a non-negative integer of at most 2^64-1 or a string, got number 18446744073709551616"],
      [{ sequence_id: -(2n ** 63n) }, "parameter 'sequence_id' must be a non-negative integer of at most 2^64-1 or a string, got number -9223372036854775808"],
      [{ priority: 2n ** 64n }, "parameter 'priority' must be a non-negative integer of at most 2^64-1, got number 18446744073709551616"],
    ];
    for (const [parameters, message] of cases) expect(() => parameterOptions(parameters)).toThrow(expect.objectContaining({ code: 'INVALID_ARG', message }));
  });

  it('turns a 64-bit model parameter into a number where it fits and a string where it does not', () => {
    expect(parameterOptions({ a: 3n, b: 2n ** 63n }).parameters).toEqual({ a: 3, b: '9223372036854775808' });
  });

  it.each([
    [{ sequence_id: -1 }, /parameter 'sequence_id' must be a non-negative integer of at most 2\^64-1 or a string, got number -1/],
    [{ sequence_id: 1.5 }, /'sequence_id'/],
    [{ sequence_id: 1, sequence_start: 'yes' }, /parameter 'sequence_start' must be a boolean, got the string "yes"/],
    [{ sequence_start: true }, /need a non-zero 'sequence_id'/],
    [{ priority: -2 }, /parameter 'priority' must be a non-negative integer of at most 2\^64-1, got number -2/],
    [{ priority: 2 ** 60 }, /parameter 'priority' must be a non-negative integer of at most 2\^64-1, got number 1152921504606847000/],
    [{ timeout: 'soon' }, /parameter 'timeout' must be a non-negative integer of at most 2\^64-1, got the string "soon"/],
    [{ nested: { a: 1 } }, /parameter 'nested' must be a string, a number or a boolean, got an object/],
    [{ triton_secret: 1 }, /parameter 'triton_secret': parameter keys starting with 'triton_' are reserved for Triton usage and should not be specified/],
  ])('refuses %j with INVALID_ARG', (parameters, message) => {
    expect(() => parameterOptions(parameters)).toThrow(expect.objectContaining({ code: 'INVALID_ARG', message: expect.stringMatching(message) }));
  });
});
