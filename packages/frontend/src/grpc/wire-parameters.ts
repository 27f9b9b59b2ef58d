import type { WireParameters } from '../request-parameters.js';
import { invalid } from '../wire-values.js';

/**
 * One InferParameter (or ModelRepositoryParameter) as the loader decodes it: the oneof
 * `parameter_choice` names the member that is set; 64-bit members arrive as strings.
 */
export interface WireParameter {
  readonly parameter_choice?: string;
  readonly [member: string]: unknown;
}

/** An InferParameter as a response carries it. */
export type InferParameter = { bool_param: boolean } | { int64_param: number | string } | { string_param: string } | { double_param: number };

/**
 * A map of InferParameters as plain values (64-bit integers as numbers where exact, else
 * BigInts), or undefined for an empty map, the common case that then costs nothing more.
 * The values' object has no prototype, so that a parameter named `__proto__` is one like any other.
 */
export function parameterValues(parameters: Readonly<Record<string, WireParameter>>, owner: string): WireParameters | undefined {
  let values: Record<string, unknown> | undefined;
  for (const name in parameters) (values ??= Object.create(null) as Record<string, unknown>)[name] = parameterValue(parameters[name]!, name, owner);
  return values;
}

/** The value of one parameter, refusing one that has no member set. */
export function parameterValue(parameter: WireParameter, name: string, owner: string): unknown {
  const member = parameter.parameter_choice;
  if (member === undefined) throw invalid(`${owner} parameter '${name}' has no value set`);
  const value = parameter[member];
  if (member !== 'int64_param' && member !== 'uint64_param') return value;
  const exact = BigInt(value as string);
  return Number.isSafeInteger(Number(exact)) ? Number(exact) : exact;
}

/** A plain value as the InferParameter member that holds it. */
export function inferParameter(value: string | number | boolean): InferParameter {
  if (typeof value === 'boolean') return { bool_param: value };
  if (typeof value === 'string') return { string_param: value };
  return Number.isInteger(value) ? { int64_param: value } : { double_param: value };
}
