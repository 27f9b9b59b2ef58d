import { expect } from 'vitest';
import { InferenceError } from '../../src/errors.js';

/** Asserts `fn` throws INVALID_ARG with a message containing each of `parts`. */
export function expectInvalidArg(fn: () => unknown, ...parts: string[]): void {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(InferenceError);
  expect((thrown as InferenceError).code).toBe('INVALID_ARG');
  for (const part of parts) expect((thrown as InferenceError).message).toContain(part);
}
