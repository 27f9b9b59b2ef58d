import { InferenceError } from '@tritium/core';
import type { ModelConfig } from '@tritium/core';
import type { RunOptions } from './native.js';

/** What a model's config `parameters` ask of libtorch, under Triton's pytorch_backend names. */
export interface TorchParameters {
  readonly run: RunOptions;
  readonly disableCudnn: boolean;
  /** One module per device for all of the model's instances. */
  readonly weightSharing: boolean;
  /** 0: not given. */
  readonly intraOpThreads: number;
  readonly interOpThreads: number;
}

function text(config: ModelConfig, key: string): string | undefined {
  const value = config.parameters?.[key]?.string_value?.trim();
  return value === '' ? undefined : value;
}

function invalid(config: ModelConfig, key: string, value: string, expected: string): InferenceError {
  return new InferenceError('INVALID_ARG', `model '${config.name ?? '?'}': parameter '${key}' is '${value}', expected ${expected}`);
}

/** A boolean as Triton parses one: true/on/1 or false/off/0, in any case. */
function flag(config: ModelConfig, key: string): boolean | undefined {
  const value = text(config, key);
  if (value === undefined) return undefined;
  const v = value.toLowerCase();
  if (v === 'true' || v === 'on' || v === '1') return true;
  if (v === 'false' || v === 'off' || v === '0') return false;
  throw invalid(config, key, value, 'a boolean ("true"/"on"/"1" or "false"/"off"/"0")');
}

function threadCount(config: ModelConfig, key: string): number {
  const value = text(config, key);
  if (value === undefined) return 0;
  if (!/^\d+$/.test(value)) throw invalid(config, key, value, 'a non-negative integer');
  return Number(value);
}

/** Reads the parameters, with Triton's defaults (optimized execution and inference mode on). */
export function torchParameters(config: ModelConfig): TorchParameters {
  return {
    run: {
      optimizedExecution: !(flag(config, 'DISABLE_OPTIMIZED_EXECUTION') ?? false),
      inferenceMode: flag(config, 'INFERENCE_MODE') ?? true,
      tensorFuser: flag(config, 'ENABLE_TENSOR_FUSER'),
      jitExecutor: flag(config, 'ENABLE_JIT_EXECUTOR'),
      jitProfiling: flag(config, 'ENABLE_JIT_PROFILING'),
      cacheCleaning: flag(config, 'ENABLE_CACHE_CLEANING') ?? false,
    },
    disableCudnn: flag(config, 'DISABLE_CUDNN') ?? false,
    weightSharing: flag(config, 'ENABLE_WEIGHT_SHARING') ?? false,
    intraOpThreads: threadCount(config, 'INTRA_OP_THREAD_COUNT'),
    interOpThreads: threadCount(config, 'INTER_OP_THREAD_COUNT'),
  };
}
