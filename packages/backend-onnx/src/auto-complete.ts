import { InferenceError, dataTypeToConfig, withDefaultBatcher } from '@tritium/core/backend';
import type { ModelConfig, ModelInput, ModelOutput } from '@tritium/core/backend';
import type { ModelSignature, TensorSignature } from './signature.js';

/** Triton's default for `--backend-config=onnxruntime,default-max-batch-size`. */
export const DEFAULT_MAX_BATCH_SIZE = 4;

/**
 * Triton's ONNX Runtime auto-complete (onnxruntime_backend ModelState::AutoCompleteConfig):
 *
 * - a config that already lists inputs and outputs is left as it is;
 * - the model can batch only when every input and output has a variable first
 *   dimension; then an absent (or 0) max_batch_size becomes the default (4), and a
 *   max_batch_size above 1 with no scheduler gets `dynamic_batching {}`;
 * - a model that cannot batch while the config asks for a max_batch_size is an error;
 * - missing inputs / outputs are filled from the model: name, type and dims (without
 *   the batch dimension when batching); a tensor left with no dims becomes dims [1],
 *   with `reshape { shape: [] }` when batching.
 */
/** A config that lists inputs (or batch inputs) and outputs is used as written, as Triton does. */
export function listsInputsAndOutputs(config: ModelConfig): boolean {
  return (config.input?.length ?? 0) + (config.batch_input?.length ?? 0) > 0 && (config.output?.length ?? 0) > 0;
}

export function autoCompleteFromSignature(
  config: ModelConfig,
  signature: ModelSignature,
  defaultMaxBatchSize: number = DEFAULT_MAX_BATCH_SIZE,
): ModelConfig {
  if (listsInputsAndOutputs(config)) return config;

  const completed: ModelConfig = { ...config };
  const all = [...signature.inputs, ...signature.outputs];
  const canBatch = all.every((t) => t.dims.length > 0 && t.dims[0] === -1);
  const maxBatchSize = config.max_batch_size ?? 0;
  if (canBatch) {
    if (maxBatchSize === 0) completed.max_batch_size = Math.max(defaultMaxBatchSize, 0);
  } else if (maxBatchSize !== 0) {
    const fixed = all.find((t) => t.dims.length === 0 || t.dims[0] !== -1)!;
    throw new InferenceError(
      'INVALID_ARG',
      `autofill failed for model '${config.name ?? '?'}': model does not support batching while non-zero max_batch_size ${maxBatchSize} is specified ` +
        `(tensor '${fixed.name}' has dims [${fixed.dims.join(',')}] in the model, with no variable first dimension)`,
    );
  }

  const batching = (completed.max_batch_size ?? 0) > 0;
  if ((config.input?.length ?? 0) + (config.batch_input?.length ?? 0) === 0) completed.input = signature.inputs.map((t) => configTensor(t, batching));
  if ((config.output?.length ?? 0) === 0) completed.output = signature.outputs.map((t) => configTensor(t, batching));
  return withDefaultBatcher(completed);
}

/** A tensor entry with the fields inputs and outputs share, so it serves as either. */
function configTensor(tensor: TensorSignature, batching: boolean): ModelInput & ModelOutput {
  const dims = batching ? tensor.dims.slice(1) : [...tensor.dims];
  const result: ModelInput & ModelOutput = { name: tensor.name, data_type: dataTypeToConfig(tensor.datatype), dims };
  if (dims.length === 0) {
    result.dims = [1];
    // An empty reshape without batching would describe a scalar config tensor, which is invalid.
    if (batching) result.reshape = { shape: [] };
  }
  return result;
}
