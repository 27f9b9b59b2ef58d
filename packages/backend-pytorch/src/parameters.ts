import { booleanParameter, choiceParameter, integerParameter } from '@tritium/core/backend';
import type { ModelConfig } from '@tritium/core/backend';
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
  /**
   * Tritium's `execution_thread`: "worker" (the default: each instance's runs on its own
   * thread, as Triton's) or "inline" (on the thread that calls infer(), the event loop's,
   * which saves the two thread wake-ups of a run and holds the loop for its length).
   */
  readonly inline: boolean;
}

/** A thread count; Triton ignores values of 0 and below, as not given. */
function threadCount(config: ModelConfig, key: string): number {
  return Math.max(0, integerParameter(config, key) ?? 0);
}

/** Reads the parameters, with Triton's defaults (optimized execution and inference mode on). */
export function torchParameters(config: ModelConfig): TorchParameters {
  return {
    run: {
      optimizedExecution: !(booleanParameter(config, 'DISABLE_OPTIMIZED_EXECUTION') ?? false),
      inferenceMode: booleanParameter(config, 'INFERENCE_MODE') ?? true,
      tensorFuser: booleanParameter(config, 'ENABLE_TENSOR_FUSER'),
      jitExecutor: booleanParameter(config, 'ENABLE_JIT_EXECUTOR'),
      jitProfiling: booleanParameter(config, 'ENABLE_JIT_PROFILING'),
      cacheCleaning: booleanParameter(config, 'ENABLE_CACHE_CLEANING') ?? false,
    },
    disableCudnn: booleanParameter(config, 'DISABLE_CUDNN') ?? false,
    weightSharing: booleanParameter(config, 'ENABLE_WEIGHT_SHARING') ?? false,
    intraOpThreads: threadCount(config, 'INTRA_OP_THREAD_COUNT'),
    interOpThreads: threadCount(config, 'INTER_OP_THREAD_COUNT'),
    inline: choiceParameter(config, 'execution_thread', { worker: "each instance's own thread", inline: "the event loop's thread" }) === 'inline',
  };
}
