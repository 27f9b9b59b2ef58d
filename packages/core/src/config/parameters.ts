import { InferenceError } from '../errors.js';
import type { ModelConfig } from './schema.js';

/*
 * A config's `parameters { key: ... value { string_value: ... } }`, as backends read
 * them. They take a ModelConfig, which a NormalizedModelConfig also is, since backends
 * read parameters both while auto-completing a config as written and while loading.
 */

/** A parameter's value, trimmed; undefined when absent or blank. */
export function modelParameter(config: ModelConfig, key: string): string | undefined {
  const value = config.parameters?.[key]?.string_value?.trim();
  return value === '' ? undefined : value;
}

/** A boolean as Triton's ParseBoolValue reads one: "true"/"on"/"1" or "false"/"off"/"0", in any case; undefined when absent. */
export function booleanParameter(config: ModelConfig, key: string): boolean | undefined {
  const value = modelParameter(config, key);
  if (value === undefined) return undefined;
  const v = value.toLowerCase();
  if (v === 'true' || v === 'on' || v === '1') return true;
  if (v === 'false' || v === 'off' || v === '0') return false;
  throw invalidParameter(config, key, value, 'a boolean ("true"/"on"/"1" or "false"/"off"/"0")');
}

/** An integer; undefined when absent. */
export function integerParameter(config: ModelConfig, key: string): number | undefined {
  const value = modelParameter(config, key);
  if (value === undefined) return undefined;
  if (!/^[+-]?\d+$/.test(value)) throw invalidParameter(config, key, value, 'an integer');
  return Number(value);
}

/**
 * One of `choices` (each value with what it means, or '' for nothing to add), in any case,
 * given back in lower case; undefined when absent.
 */
export function choiceParameter<T extends string>(config: ModelConfig, key: string, choices: Readonly<Record<T, string>>): T | undefined {
  const value = modelParameter(config, key);
  if (value === undefined) return undefined;
  const v = value.toLowerCase();
  if (Object.hasOwn(choices, v)) return v as T;
  const listed = Object.entries<string>(choices).map(([choice, meaning]) => (meaning ? `"${choice}" (${meaning})` : `"${choice}"`));
  throw invalidParameter(config, key, value, `${listed.slice(0, -1).join(', ')} or ${listed.at(-1)}`);
}

/** INVALID_ARG naming the model, the parameter, its value and what it should have been. */
export function invalidParameter(config: ModelConfig, key: string, value: string, expected: string): InferenceError {
  return new InferenceError('INVALID_ARG', `model '${config.name ?? '?'}': parameter '${key}' is '${value}', expected ${expected}`);
}
