import { InferenceError, dataTypeFromConfig, dataTypeToConfig, shapeToString } from '@tritium/core';
import type { NormalizedModelConfig, NormalizedModelInput, NormalizedModelOutput } from '@tritium/core';
import { controlInputNames, modelSideDims } from './config.js';
import type { ModelSignature, TensorSignature } from './signature.js';

/**
 * Checks a config against the model it serves, as Triton's ONNX Runtime backend does
 * when an instance is created (ValidateInputs / ValidateOutputs): the same number of
 * required inputs, every configured tensor present in the model with the same type,
 * and dims (the reshape when given) that fit the model's, with a variable first
 * dimension in the model when the config batches. An input's dims fit where the
 * model's dimension is variable (-1); an output's must equal the model's exactly, -1
 * included (Triton's compare_exact). Errors name both sides.
 */
export function validateConfigAgainstModel(config: NormalizedModelConfig, signature: ModelSignature): void {
  const model = `unable to load model '${config.name}'`;
  unsupportedFeatures(model, config);
  const inputs = config.input;
  const controls = controlInputNames(config);
  const required = inputs.filter((t) => !t.optional).length + controls.length;
  if (required !== signature.inputs.length) {
    const listed = [...inputs, ...controls.map((name) => ({ name }))];
    throw new InferenceError(
      'INVALID_ARG',
      `${model}, configuration expects ${required} inputs (${names(listed)}), model provides ${signature.inputs.length} (${names(signature.inputs)})`,
    );
  }
  for (const name of controls) {
    if (!signature.inputs.some((t) => t.name === name)) {
      throw new InferenceError('INVALID_ARG', `${model}, sequence control input '${name}' is not in the model, whose inputs are: ${names(signature.inputs)}`);
    }
  }
  const maxBatchSize = config.max_batch_size;
  for (const tensor of inputs) {
    if (tensor.optional && maxBatchSize !== 0) {
      throw new InferenceError('INVALID_ARG', `${model}, optional input '${tensor.name}' is not supported for models that support batching`);
    }
    checkTensor(model, 'input', tensor, signature.inputs, maxBatchSize);
  }
  for (const tensor of config.output) checkTensor(model, 'output', tensor, signature.outputs, maxBatchSize);
}

function checkTensor(
  model: string,
  role: 'input' | 'output',
  tensor: NormalizedModelInput | NormalizedModelOutput,
  available: readonly TensorSignature[],
  maxBatchSize: number,
): void {
  const found = available.find((t) => t.name === tensor.name);
  if (!found) {
    // Triton also accepts an initializer the model lets requests override (an optional
    // input), but onnxruntime's JavaScript API neither lists initializers nor feeds them.
    const initializerNote =
      role === 'input' ? ` (an overridable initializer cannot be an input here: onnxruntime's JavaScript API ignores feeds for initializers)` : '';
    throw new InferenceError(
      'INVALID_ARG',
      `${model}, configuration ${role} '${tensor.name}' is not in the model, whose ${role}s are: ${names(available)}${initializerNote}`,
    );
  }
  const configType = tensor.data_type;
  let datatype;
  try {
    datatype = dataTypeFromConfig(configType);
  } catch (error) {
    throw new InferenceError('INVALID_ARG', `${model}, ${role} '${tensor.name}': ${(error as Error).message}`, { cause: error });
  }
  if (datatype !== found.datatype) {
    throw new InferenceError(
      'INVALID_ARG',
      `${model}, configuration expects datatype ${configType} for ${role} '${tensor.name}', model provides ${dataTypeToConfig(found.datatype)}`,
    );
  }

  const dims = modelSideDims(tensor);
  const what = tensor.reshape ? 'reshape' : 'dims';
  if (found.dims.length === 0) {
    // A scalar in the model: a non-batching config may only give dims of 1s.
    if (dims.some((d) => d !== 1)) {
      throw new InferenceError(
        'INVALID_ARG',
        `${model}, scalar ${role} '${tensor.name}' should only have 1s as dims in the model configuration, which gives ${what} ${shapeToString(dims)}`,
      );
    }
    return;
  }
  let modelDims = found.dims;
  if (maxBatchSize > 0) {
    if (found.dims[0] !== -1) {
      throw new InferenceError(
        'INVALID_ARG',
        `${model}, model configuration supports batching (max_batch_size ${maxBatchSize}) but the first dimension of ${role} '${tensor.name}' ` +
          `in the model is not a variable-size batch dimension: model dims ${shapeToString(found.dims)}, configuration ${what} ${shapeToString(dims)}`,
      );
    }
    modelDims = found.dims.slice(1);
  }
  const exact = role === 'output';
  const fits = modelDims.length === dims.length && modelDims.every((d, i) => d === dims[i] || (!exact && d === -1));
  if (!fits) {
    const batchNote = maxBatchSize > 0 ? ' (without the batch dimension)' : '';
    const exactNote = exact ? " (an output's dims must equal the model's, with -1 exactly where the model's are variable)" : '';
    throw new InferenceError(
      'INVALID_ARG',
      `${model}, ${role} '${tensor.name}' has dims ${shapeToString(modelDims)} in the model${batchNote} but ${what} ${shapeToString(dims)} in the configuration${exactNote}`,
    );
  }
}

/** Config features whose tensors this backend would have to make itself, which it does not (yet). */
function unsupportedFeatures(model: string, config: NormalizedModelConfig): void {
  const features: string[] = [];
  if (config.batch_input.length > 0) features.push('batch_input');
  if (config.batch_output.length > 0) features.push('batch_output');
  if ((config.sequence_batching?.state.length ?? 0) > 0) features.push('sequence_batching.state (implicit state)');
  if (features.length > 0) {
    throw new InferenceError('UNSUPPORTED', `${model}, the ONNX backend does not support ${features.join(', ')} yet`);
  }
}

function names(tensors: readonly { name: string }[]): string {
  return tensors.length === 0 ? 'none' : tensors.map((t) => `'${t.name}'`).join(', ');
}
