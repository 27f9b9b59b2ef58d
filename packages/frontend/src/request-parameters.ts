import { InferenceError, type InferRequest } from '@tritium/core';

/** A request's parameters as either protocol carries them (JSON values, or InferParameter's oneof). */
export type WireParameters = Readonly<Record<string, unknown>>;

/** The request fields KServe v2 parameters carry, and the model's own parameters. */
export type ParameterOptions = Pick<InferRequest, 'priority' | 'timeoutMicroseconds' | 'sequence' | 'parameters'>;

/** Parameters Triton reads itself, so a model never sees them. */
const RESERVED = new Set(['sequence_id', 'sequence_start', 'sequence_end', 'priority', 'timeout', 'binary_data_output', 'triton_enable_empty_final_response']);

/**
 * Reads Triton's request parameters (the sequence extension's `sequence_id`,
 * `sequence_start`, `sequence_end`; `priority`; `timeout` in microseconds) into the
 * request's options, and passes every other scalar through to the model.
 */
export function parameterOptions(parameters: WireParameters | undefined): ParameterOptions {
  if (parameters === undefined) return {};
  const options: { -readonly [K in keyof ParameterOptions]: ParameterOptions[K] } = {};
  const passed: Record<string, string | number | boolean> = {};
  for (const [name, value] of Object.entries(parameters)) {
    if (RESERVED.has(name)) continue;
    if (typeof value === 'bigint') passed[name] = Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
    else if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') passed[name] = value;
    else throw invalid(name, 'must be a string, a number or a boolean', value);
  }
  if (Object.keys(passed).length > 0) options.parameters = passed;
  if ('priority' in parameters) options.priority = unsignedInteger('priority', parameters.priority);
  if ('timeout' in parameters) options.timeoutMicroseconds = unsignedInteger('timeout', parameters.timeout);
  const id = correlationId(parameters.sequence_id);
  // Triton treats a zero (or empty) sequence id as no sequence at all.
  if (id !== undefined) {
    options.sequence = { id, start: flag('sequence_start', parameters.sequence_start), end: flag('sequence_end', parameters.sequence_end) };
  } else if (flag('sequence_start', parameters.sequence_start) || flag('sequence_end', parameters.sequence_end)) {
    throw new InferenceError('INVALID_ARG', "parameters 'sequence_start' and 'sequence_end' need a non-zero 'sequence_id'");
  }
  return options;
}

function correlationId(value: unknown): number | bigint | string | undefined {
  if (value === undefined || value === 0 || value === 0n || value === '') return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'bigint' && value > 0n) return Number.isSafeInteger(Number(value)) ? Number(value) : value;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value > 0) return value;
  throw invalid('sequence_id', 'must be a non-negative integer or a string', value);
}

function unsignedInteger(name: string, value: unknown): number {
  const number = typeof value === 'bigint' ? Number(value) : value;
  if (typeof number === 'number' && Number.isSafeInteger(number) && number >= 0) return number;
  throw invalid(name, 'must be a non-negative integer', value);
}

function flag(name: string, value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value === 'boolean') return value;
  throw invalid(name, 'must be a boolean', value);
}

function invalid(name: string, rule: string, value: unknown): InferenceError {
  const shown = typeof value === 'bigint' ? `${value}` : JSON.stringify(value) ?? String(value);
  return new InferenceError('INVALID_ARG', `parameter '${name}' ${rule}, got ${shown}`);
}
