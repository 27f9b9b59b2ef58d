import { InferenceError } from '@tritium/core';
import type { ModelConfig, NormalizedModelConfig } from '@tritium/core';

/*
 * Reading core's config types. Parameters are read from a config as written
 * (auto-complete) and from a normalized one (load), so their helpers take ModelConfig,
 * which a NormalizedModelConfig also is; the rest read the normalized form only.
 */

/** A `parameters { key: ... value { string_value: ... } }` entry, or undefined. */
export function parameter(config: ModelConfig, key: string): string | undefined {
  const entry = config.parameters?.[key];
  return entry?.string_value;
}

/**
 * Reads a boolean parameter as Triton's ParseBoolValue does: "true"/"on"/"1" or
 * "false"/"off"/"0", in any case. Absent or blank: the fallback.
 */
export function booleanParameter(config: ModelConfig, key: string, fallback: boolean): boolean {
  const value = parameter(config, key);
  if (value === undefined || value.trim() === '') return fallback;
  const v = value.trim().toLowerCase();
  if (v === 'true' || v === 'on' || v === '1') return true;
  if (v === 'false' || v === 'off' || v === '0') return false;
  throw invalidParameter(config, key, value, 'a boolean ("true"/"on"/"1" or "false"/"off"/"0")');
}

/** Reads an integer parameter; undefined when absent or empty. */
export function integerParameter(config: ModelConfig, key: string): number | undefined {
  const value = parameter(config, key);
  if (value === undefined || value.trim() === '') return undefined;
  if (!/^[+-]?\d+$/.test(value.trim())) throw invalidParameter(config, key, value, 'an integer');
  return Number(value.trim());
}

export function invalidParameter(config: ModelConfig, key: string, value: string, expected: string): InferenceError {
  return new InferenceError(
    'INVALID_ARG',
    `model '${config.name ?? '?'}': parameter '${key}' is '${value}', expected ${expected}`,
  );
}

/** The shape a tensor has in the model: the reshape when given, else dims. */
export function modelSideDims(tensor: { readonly dims: number[]; readonly reshape?: { readonly shape: number[] } }): number[] {
  return tensor.reshape?.shape ?? tensor.dims;
}

