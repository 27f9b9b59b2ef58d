import type { InferRequest } from '@tritium/core';
import { asUint64, describe, invalid } from './wire-values.js';

/** A request's parameters as either protocol carries them (JSON values, or InferParameter's oneof). */
export type WireParameters = Readonly<Record<string, unknown>>;

/** The request fields KServe v2 parameters carry, and the model's own parameters. */
export type ParameterOptions = Pick<InferRequest, 'priority' | 'timeoutMicroseconds' | 'sequence' | 'parameters'>;

/**
 * Triton's request parameter asking a decoupled model's stream to report its end with an
 * empty response marked final; the one `triton_` key a client may send. Each protocol
 * reads it itself.
 */
export const EMPTY_FINAL_RESPONSE = 'triton_enable_empty_final_response';

/** Parameters Triton reads itself, so a model never sees them. */
const READ_BY_TRITON = new Set(['sequence_id', 'sequence_start', 'sequence_end', 'priority', 'timeout', EMPTY_FINAL_RESPONSE]);

/**
 * Reads Triton's request parameters (the sequence extension's `sequence_id`,
 * `sequence_start`, `sequence_end`; `priority`; `timeout` in microseconds) into the
 * request's options, and passes every other scalar through to the model, except the
 * `protocolOwn` ones the protocol reads itself (HTTP's `binary_data_output`). Keys
 * starting with `triton_` are Triton's: any but EMPTY_FINAL_RESPONSE is refused.
 */
export function parameterOptions(parameters: WireParameters | undefined, protocolOwn: readonly string[] = []): ParameterOptions {
  if (parameters === undefined) return {};
  const options: { -readonly [K in keyof ParameterOptions]: ParameterOptions[K] } = {};
  // No prototype: a parameter named `__proto__` reaches the model like any other.
  const passed: Record<string, string | number | boolean> = Object.create(null);
  for (const [name, value] of Object.entries(parameters)) {
    if (READ_BY_TRITON.has(name) || protocolOwn.includes(name)) continue;
    if (name.startsWith('triton_')) throw reservedParameter(name);
    if (typeof value === 'bigint') passed[name] = Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') passed[name] = value;
    else throw badParameter(name, 'must be a string, a number or a boolean', value);
  }
  if (Object.keys(passed).length > 0) options.parameters = passed;
  if ('priority' in parameters) options.priority = cappedUint64('priority', parameters.priority);
  if ('timeout' in parameters) options.timeoutMicroseconds = cappedUint64('timeout', parameters.timeout);
  const id = correlationId(parameters.sequence_id);
  // Triton treats a zero (or empty) sequence id as no sequence at all.
  if (id !== undefined) {
    options.sequence = { id, start: flag('sequence_start', parameters.sequence_start), end: flag('sequence_end', parameters.sequence_end) };
  } else if (flag('sequence_start', parameters.sequence_start) || flag('sequence_end', parameters.sequence_end)) {
    throw invalid("parameters 'sequence_start' and 'sequence_end' need a non-zero 'sequence_id'");
  }
  return options;
}

/** The refusal of a `triton_` key Triton keeps for itself. */
export function reservedParameter(name: string) {
  return invalid(`parameter '${name}': parameter keys starting with 'triton_' are reserved for Triton usage and should not be specified`);
}

/** Triton's correlation id: a uint64 (a bigint beyond 2^53) or a string. */
function correlationId(value: unknown): number | bigint | string | undefined {
  if (value === undefined || value === 0 || value === 0n || value === '') return undefined;
  if (typeof value === 'string') return value;
  const id = asUint64(value);
  if (id === undefined) throw badParameter('sequence_id', 'must be a non-negative integer of at most 2^64-1 or a string', value);
  return id;
}

/**
 * A uint64 as core takes it, a number: Triton serves a priority above the model's levels
 * at the default one, and a timeout beyond 2^53 microseconds (285 years) never comes, so
 * a larger value acts as 2^53-1 does.
 */
function cappedUint64(name: string, value: unknown): number {
  const number = asUint64(value);
  if (number === undefined) throw badParameter(name, 'must be a non-negative integer of at most 2^64-1', value);
  return typeof number === 'bigint' ? Number.MAX_SAFE_INTEGER : number;
}

function flag(name: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value === 'boolean') return value;
  throw badParameter(name, 'must be a boolean', value);
}

function badParameter(name: string, rule: string, value: unknown) {
  return invalid(`parameter '${name}' ${rule}, got ${describe(value)}`);
}
