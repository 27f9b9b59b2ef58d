import { InferenceError, controlInputNames, dataTypeFromConfig, dataTypeToConfig, shapeToString } from '@tritium/core/backend';
import type { NormalizedModelConfig, NormalizedModelInput } from '@tritium/core/backend';
import { modelSideDims } from './config.js';
import type { ModelSignature, TensorSignature } from './signature.js';

/**
 * Checks a config against the model it serves, as Triton's ONNX Runtime backend does
 * when an instance is created (ValidateInputs / ValidateOutputs): the same number of
 * required inputs, every configured tensor present in the model with the same type,
 * and dims (the reshape when given) that fit the model's, with a variable first
 * dimension in the model when the config batches. An input's dims fit where the
 * model's dimension is variable (-1); an output's must equal the model's exactly, -1
 * included (Triton's compare_exact). The model's inputs also take the sequence
 * controls, the batch inputs' targets and the sequence states' inputs, and its
 * outputs give the states' outputs; a ragged input is [-1] in the model. Errors name
 * both sides.
 */
export function validateConfigAgainstModel(config: NormalizedModelConfig, signature: ModelSignature): void {
  const model = `unable to load model '${config.name}'`;
  const inputs = config.input;
  const controls = controlInputNames(config);
  const batchInputs = config.batch_input.flatMap((b) => b.target_name.map((name) => ({ name, data_type: b.data_type })));
  const states = config.sequence_batching?.state ?? [];
  const required = inputs.filter((t) => !t.optional).length + controls.length + batchInputs.length + states.length;
  if (required !== signature.inputs.length) {
    const listed = [...inputs, ...controls.map((name) => ({ name })), ...batchInputs, ...states.map((s) => ({ name: s.input_name }))];
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
    if (tensor.allow_ragged_batch) checkRagged(model, tensor, signature.inputs);
    else checkTensor(model, 'input', tensor, signature.inputs, maxBatchSize, false);
  }
  // Batch inputs and batch outputs have the shapes the batch gives them: only their datatypes are checked.
  for (const tensor of batchInputs) checkDatatype(model, 'batch input', tensor, signature.inputs);
  const scattered = new Set(config.batch_output.flatMap((b) => b.target_name));
  for (const tensor of config.output) {
    if (scattered.has(tensor.name)) checkDatatype(model, 'batch output', tensor, signature.outputs);
    else checkTensor(model, 'output', tensor, signature.outputs, maxBatchSize, true);
  }
  // Triton checks only a state output's datatype; its dims are checked here as an input's are.
  for (const state of states) {
    const { data_type, dims } = state;
    checkTensor(model, 'state input', { name: state.input_name, data_type, dims }, signature.inputs, maxBatchSize, false);
    checkTensor(model, 'state output', { name: state.output_name, data_type, dims }, signature.outputs, maxBatchSize, false);
  }
}

/** What a check reads of a configured tensor (an input, output, or a sequence state's side). */
interface ConfiguredTensor {
  readonly name: string;
  readonly data_type: string;
  readonly dims: number[];
  readonly reshape?: { readonly shape: number[] };
}

/** A ragged input reaches the model as all the batch's elements in one dimension, so the model must take [-1], as Triton requires. */
function checkRagged(model: string, tensor: NormalizedModelInput, available: readonly TensorSignature[]): void {
  const found = checkDatatype(model, 'input', tensor, available);
  if (found.dims.length !== 1 || found.dims[0] !== -1) {
    throw new InferenceError(
      'INVALID_ARG',
      `${model}, ragged input '${tensor.name}' (allow_ragged_batch) must have shape [-1] in the model, which gives ${shapeToString(found.dims)}`,
    );
  }
}

/** The model's tensor of that name, checked to have the configured datatype. */
function checkDatatype(model: string, role: string, tensor: Pick<ConfiguredTensor, 'name' | 'data_type'>, available: readonly TensorSignature[]): TensorSignature {
  const found = available.find((t) => t.name === tensor.name);
  if (!found) {
    // Triton also accepts an initializer the model lets requests override (an optional
    // input), but onnxruntime's JavaScript API neither lists initializers nor feeds them.
    const initializerNote =
      role === 'input' ? ` (an overridable initializer cannot be an input here: onnxruntime's JavaScript API ignores feeds for initializers)` : '';
    const kind = role.endsWith('input') ? 'input' : 'output';
    throw new InferenceError(
      'INVALID_ARG',
      `${model}, configuration ${role} '${tensor.name}' is not in the model, whose ${kind}s are: ${names(available)}${initializerNote}`,
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
  return found;
}

/**
 * Datatype, then dims: `exact` compares -1 with -1 only (Triton's compare_exact for
 * outputs); otherwise a variable dimension in the model fits any configured one.
 */
function checkTensor(
  model: string,
  role: string,
  tensor: ConfiguredTensor,
  available: readonly TensorSignature[],
  maxBatchSize: number,
  exact: boolean,
): void {
  const found = checkDatatype(model, role, tensor, available);
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

function names(tensors: readonly { name: string }[]): string {
  return tensors.length === 0 ? 'none' : tensors.map((t) => `'${t.name}'`).join(', ');
}
