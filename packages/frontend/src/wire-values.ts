import { InferenceError } from '@tritium/core';

/*
 * The checks every value a client sends goes through, whichever protocol carried it,
 * and how an error message shows such a value.
 */

/** A request that is wrong: INVALID_ARG (400 over HTTP, INVALID_ARGUMENT over gRPC), the message saying what. */
export function invalid(message: string): InferenceError {
  return new InferenceError('INVALID_ARG', message);
}

/**
 * A count, a size or an offset: a non-negative safe integer, as a number or (from a
 * 64-bit wire field) a bigint. Undefined for any other value.
 */
export function asCount(value: unknown): number | undefined {
  const number = typeof value === 'bigint' ? Number(value) : value;
  return typeof number === 'number' && Number.isSafeInteger(number) && number >= 0 ? number : undefined;
}

const MAX_UINT64 = 2n ** 64n - 1n;

/**
 * A uint64 as Triton takes one (binary_data_size, sequence_id, priority): a count as a
 * number, or beyond 2^53 a bigint up to 2^64-1, as JSON integers that large are read.
 * Undefined for any other value.
 */
export function asUint64(value: unknown): number | bigint | undefined {
  if (typeof value !== 'bigint') return asCount(value);
  if (value < 0n || value > MAX_UINT64) return undefined;
  return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value;
}

/** A JSON object (not an array, not null), its fields not yet checked. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Longer strings are cut short in messages: a client gets its mistake named, not its body back. */
const SHOWN_LENGTH = 100;

/**
 * A value as an error message shows it ("number 7", 'the string "x"', "an array"):
 * never the insides of an array or object, which may nest deeper than a stack.
 */
export function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  // A bigint is how a JSON integer beyond 2^53 (or a 64-bit wire field) arrives.
  if (typeof value === 'bigint') return `number ${value}`;
  if (typeof value !== 'string') return `${typeof value} ${String(value)}`;
  return `the string ${JSON.stringify(value.length > SHOWN_LENGTH ? `${value.slice(0, SHOWN_LENGTH)}…` : value)}`;
}
