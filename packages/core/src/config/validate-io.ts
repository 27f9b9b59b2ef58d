import { TENSORRT_PLATFORM } from './platforms.js';
import type { NormalizedModelConfig, NormalizedModelInput, NormalizedModelOutput } from './schema.js';

/*
 * Triton's rules for inputs, outputs, batch inputs and batch outputs
 * (ValidateModelIOConfig: ValidateIOShape, ValidateModelInput/Output, ValidateBatchIO).
 */

type Fail = (message: string) => never;

/** A dimension of -1 is variable-size. */
const WILDCARD_DIM = -1;
const BATCH_INPUT_DATA_TYPES = new Set(['TYPE_INT32', 'TYPE_FP32']);

const show = (shape: readonly number[]) => `[${shape.join(', ')}]`;

/** As Triton counts: -1 when any dimension is variable, 0 for an empty shape. */
function elementCount(shape: readonly number[]): number {
  if (shape.includes(WILDCARD_DIM)) return WILDCARD_DIM;
  return shape.length === 0 ? 0 : shape.reduce((product, dim) => product * dim, 1);
}

/** Element counts of the runs between variable dimensions: [2, 4, -1, 6] gives [8, 6]. */
function runCounts(shape: readonly number[]): number[] {
  const counts = [1];
  for (const dim of shape) {
    if (dim === WILDCARD_DIM) counts.push(1);
    else counts[counts.length - 1]! *= dim;
  }
  return counts;
}

function validateShape(io: NormalizedModelInput | NormalizedModelOutput, role: 'input' | 'output', index: number, maxBatchSize: number, fail: Fail): void {
  if (!io.name) fail(`${role} ${index} must specify 'name'`);
  const tensor = `${role} '${io.name}'`;
  if (io.data_type === 'TYPE_INVALID') fail(`${tensor} must specify 'data_type'`);
  if (io.dims.length === 0) fail(`${tensor} must specify 'dims'`);
  const { reshape } = io;
  // A non-batching model would always see such a tensor empty.
  if (reshape && reshape.shape.length === 0 && maxBatchSize === 0) {
    fail(`${tensor} cannot have an empty 'reshape' when max_batch_size is 0: scalar tensors are not supported`);
  }
  if (io.dims.some((dim) => dim < 1 && dim !== WILDCARD_DIM)) {
    fail(`${tensor} has dims ${show(io.dims)}: each dimension must be an integer >= 1, or -1 for a variable-size dimension`);
  }
  if (!reshape) return;
  if (reshape.shape.some((dim) => dim < 1 && dim !== WILDCARD_DIM)) {
    fail(`${tensor} has reshape ${show(reshape.shape)}: each reshape dimension must be an integer >= 1, or -1 for a variable-size dimension`);
  }
  const dimsCount = elementCount(io.dims);
  const reshapeCount = elementCount(reshape.shape);
  const differentSize = `${tensor} has dims ${show(io.dims)} and reshape ${show(reshape.shape)} of different size`;
  // An empty reshape stands for one element.
  if (dimsCount !== reshapeCount && !(reshapeCount === 0 && dimsCount === 1)) fail(differentSize);
  if (dimsCount === WILDCARD_DIM) {
    // Each run between variable dimensions must hold the same number of elements.
    const dimsRuns = runCounts(io.dims);
    const reshapeRuns = runCounts(reshape.shape);
    if (dimsRuns.length !== reshapeRuns.length) {
      fail(`${tensor} has a different number of variable-size dimensions in dims ${show(io.dims)} and reshape ${show(reshape.shape)}`);
    }
    if (dimsRuns.some((count, i) => count !== reshapeRuns[i])) fail(differentSize);
  }
}

/** TensorRT-only properties of a tensor. */
function validateTensorRtOnly(io: NormalizedModelInput | NormalizedModelOutput, role: 'input' | 'output', platform: string, fail: Fail): void {
  const tensor = `${role} '${io.name}'`;
  if (io.is_shape_tensor && platform !== TENSORRT_PLATFORM) fail(`${tensor} sets 'is_shape_tensor', which only the TensorRT platform supports`);
  if (io.is_non_linear_format_io) {
    if (platform !== TENSORRT_PLATFORM) fail(`${tensor} sets 'is_non_linear_format_io', which only the TensorRT platform supports`);
    if (io.dims.length !== 3) fail(`${tensor} sets 'is_non_linear_format_io', which requires 3 dims, got ${show(io.dims)}`);
  }
}

function validateBatchIO(config: NormalizedModelConfig, fail: Fail): void {
  const inputNames = new Set(config.input.map((input) => input.name));
  const outputNames = new Set(config.output.map((output) => output.name));
  const checkSources = (where: string, kind: string, sources: readonly string[]) => {
    if (sources.length !== 1) fail(`${where} of kind '${kind}' expects 1 'source_input', got ${sources.length}`);
    const unknown = sources.find((source) => !inputNames.has(source));
    if (unknown !== undefined) fail(`${where} names unknown source input '${unknown}' in 'source_input'`);
  };
  config.batch_input.forEach((batchInput, i) => {
    const where = `batch_input[${i}]`;
    checkSources(where, batchInput.kind, batchInput.source_input);
    if (!BATCH_INPUT_DATA_TYPES.has(batchInput.data_type)) fail(`${where} has 'data_type' ${batchInput.data_type}; it must be TYPE_INT32 or TYPE_FP32`);
  });
  config.batch_output.forEach((batchOutput, i) => {
    const where = `batch_output[${i}]`;
    checkSources(where, batchOutput.kind, batchOutput.source_input);
    const seen = new Set<string>();
    for (const target of batchOutput.target_name) {
      if (!outputNames.has(target)) fail(`${where} names unknown target output '${target}' in 'target_name'`);
      if (seen.has(target)) fail(`${where} names target output '${target}' in 'target_name' more than once`);
      seen.add(target);
    }
  });
}

export function validateModelIO(config: NormalizedModelConfig, fail: Fail): void {
  config.input.forEach((input, i) => {
    validateShape(input, 'input', i, config.max_batch_size, fail);
    if (input.format !== 'FORMAT_NONE' && input.dims.length !== 3) {
      fail(`input '${input.name}' has format ${input.format}, which requires 3 dims, got ${show(input.dims)}`);
    }
    validateTensorRtOnly(input, 'input', config.platform, fail);
  });
  config.output.forEach((output, i) => {
    validateShape(output, 'output', i, config.max_batch_size, fail);
    validateTensorRtOnly(output, 'output', config.platform, fail);
  });
  validateBatchIO(config, fail);
}
