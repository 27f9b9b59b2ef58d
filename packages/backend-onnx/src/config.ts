import { InferenceError } from '@tritium/core';
import type { ModelConfig } from '@tritium/core';

/**
 * The parts of model_config.proto this backend reads, all optional: auto-complete
 * sees a config as written (maybe only a name), createModel a normalized one.
 */
export interface ConfigTensor {
  name: string;
  data_type?: string;
  dims?: number[];
  reshape?: { shape?: number[] };
  optional?: boolean;
}

export interface ConfigView {
  name?: string;
  platform?: string;
  backend?: string;
  max_batch_size?: number;
  input?: ConfigTensor[];
  output?: ConfigTensor[];
  batch_input?: unknown[];
  batch_output?: unknown[];
  instance_group?: Array<{ name?: string; kind?: string; count?: number; gpus?: number[] }>;
  dynamic_batching?: unknown;
  sequence_batching?: {
    control_input?: Array<{ name?: string }>;
    state?: unknown[];
  };
  optimization?: {
    graph?: { level?: number };
    execution_accelerators?: {
      gpu_execution_accelerator?: ExecutionAccelerator[];
      cpu_execution_accelerator?: ExecutionAccelerator[];
    };
  };
  parameters?: Record<string, { string_value?: string }>;
  default_model_filename?: string;
}

export interface ExecutionAccelerator {
  name: string;
  parameters?: Record<string, string>;
}

/** The one place core's ModelConfig is read through this backend's narrower view. */
export function viewOf(config: ModelConfig): ConfigView {
  return config as unknown as ConfigView;
}

export function modelConfigOf(view: ConfigView): ModelConfig {
  return view as unknown as ModelConfig;
}

/** A `parameters { key: ... value { string_value: ... } }` entry, or undefined. */
export function parameter(config: ConfigView, key: string): string | undefined {
  const entry = config.parameters?.[key];
  return entry?.string_value;
}

/**
 * Reads a boolean parameter as Triton's ParseBoolValue does: "true"/"on"/"1" or
 * "false"/"off"/"0", in any case. Absent or blank: the fallback.
 */
export function booleanParameter(config: ConfigView, key: string, fallback: boolean): boolean {
  const value = parameter(config, key);
  if (value === undefined || value.trim() === '') return fallback;
  const v = value.trim().toLowerCase();
  if (v === 'true' || v === 'on' || v === '1') return true;
  if (v === 'false' || v === 'off' || v === '0') return false;
  throw invalidParameter(config, key, value, 'a boolean ("true"/"on"/"1" or "false"/"off"/"0")');
}

/** Reads an integer parameter; undefined when absent or empty. */
export function integerParameter(config: ConfigView, key: string): number | undefined {
  const value = parameter(config, key);
  if (value === undefined || value.trim() === '') return undefined;
  if (!/^[+-]?\d+$/.test(value.trim())) throw invalidParameter(config, key, value, 'an integer');
  return Number(value.trim());
}

export function invalidParameter(config: ConfigView, key: string, value: string, expected: string): InferenceError {
  return new InferenceError(
    'INVALID_ARG',
    `model '${config.name ?? '?'}': parameter '${key}' is '${value}', expected ${expected}`,
  );
}

/** The shape a tensor has in the model: the reshape when given, else dims. */
export function modelSideDims(tensor: ConfigTensor): number[] {
  return tensor.reshape?.shape ?? tensor.dims ?? [];
}

/** The sequence batcher's control tensors (START, END, READY, CORRID), which are model inputs too. */
export function controlInputNames(config: ConfigView): string[] {
  return (config.sequence_batching?.control_input ?? []).map((c) => c.name ?? '').filter((name) => name !== '');
}
