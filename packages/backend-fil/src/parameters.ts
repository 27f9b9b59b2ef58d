import { availableParallelism } from 'node:os';
import { emitTritiumWarning, integerParameter, invalidParameter, modelParameter } from '@tritium/core/backend';
import type { ModelConfig } from '@tritium/core/backend';

/** Triton FIL's model_type values. */
export const MODEL_TYPES = ['xgboost', 'xgboost_json', 'xgboost_ubj', 'lightgbm', 'treelite_checkpoint'] as const;
export type ModelType = (typeof MODEL_TYPES)[number];

/** GPU and layout tuning of Triton's FIL, meaningless for this evaluator: accepted with a warning. */
const TUNING_PARAMETERS = ['algo', 'threads_per_tree', 'storage_type', 'blocks_per_sm', 'layout', 'chunk_size', 'use_experimental_optimizations', 'transfer_threshold'];

export interface FilParameters {
  readonly modelType: ModelType;
  readonly isClassifier: boolean;
  readonly predictProba: boolean;
  readonly threshold: number;
  readonly allowUnknownField: boolean;
  /** Threads a large batch is split among (cpu_nthread, at most the core count; all cores when not given or below 1). */
  readonly threads: number;
}

/** Reads the parameters as Triton's FIL backend does, warning on those that do not apply here. */
export function readParameters(config: ModelConfig): FilParameters {
  const name = config.name ?? '?';
  const get = (key: string) => modelParameter(config, key);
  const modelType = (get('model_type') ?? 'xgboost') as ModelType;
  if (!MODEL_TYPES.includes(modelType)) throw invalidParameter(config, 'model_type', modelType, MODEL_TYPES.map((t) => `"${t}"`).join(', '));
  // output_class is the older name of is_classifier.
  let isClassifier = bool(config, 'is_classifier');
  const outputClass = bool(config, 'output_class');
  if (outputClass !== undefined) {
    emitTritiumWarning('TRITIUM_W013', `model '${name}': parameter 'output_class' is deprecated, use 'is_classifier'`);
    isClassifier ??= outputClass;
  }
  const thresholdText = get('threshold');
  const threshold = thresholdText === undefined ? 0.5 : Number(thresholdText);
  if (!Number.isFinite(threshold)) throw invalidParameter(config, 'threshold', thresholdText!, 'a number');
  for (const key of TUNING_PARAMETERS) {
    if (get(key) !== undefined) emitTritiumWarning('TRITIUM_W014', `model '${name}': parameter '${key}' is accepted but has no effect (trees are evaluated in TypeScript on the CPU)`);
  }
  return {
    modelType,
    isClassifier: isClassifier ?? false,
    predictProba: bool(config, 'predict_proba') ?? false,
    threshold,
    allowUnknownField: bool(config, 'xgboost_allow_unknown_field') ?? false,
    threads: threadCount(config),
  };
}

/** FIL's booleans: "true"/"1" or "false"/"0", in any case. */
function bool(config: ModelConfig, key: string): boolean | undefined {
  const value = modelParameter(config, key);
  if (value === undefined) return undefined;
  const v = value.toLowerCase();
  if (v === 'true' || v === '1') return true;
  if (v === 'false' || v === '0') return false;
  throw invalidParameter(config, key, value, '"true" or "false"');
}

/** cpu_nthread, at most one thread per core: the walk is CPU-bound, and more threads only compete. */
function threadCount(config: ModelConfig): number {
  const threads = integerParameter(config, 'cpu_nthread') ?? 0;
  return threads >= 1 ? Math.min(threads, availableParallelism()) : availableParallelism();
}
