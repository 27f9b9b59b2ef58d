import { InferenceError } from '@tritium/core';

/** The JSON kinds Triton's TritonJson reads a value as, named as its errors name them. */
export type TritonJsonKind = 'string' | 'boolean' | 'signed-integer' | 'unsigned-integer' | 'number' | 'array' | 'object';

/**
 * TritonJson's error for a value of another kind than the one read (`attempt to access
 * JSON non-string as string`), after Triton's `context` and before our `detail`.
 * INTERNAL (500), as Triton's HTTP frontend makes every TritonJson error.
 */
export function wrongJsonKind(context: string | undefined, kind: TritonJsonKind, detail: string): InferenceError {
  const words = `attempt to access JSON non-${kind} as ${kind === 'number' ? 'double' : kind}`;
  return new InferenceError('INTERNAL', `${context ? `${context}: ` : ''}${words}: ${detail}`);
}
