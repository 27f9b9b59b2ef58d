import type { NormalizedModelConfig } from '../config/schema.js';
import { InferenceError } from '../errors.js';
import { dataTypeFromConfig } from '../tensor/datatype.js';
import { elementCount } from '../tensor/shape.js';
import type { Tensor } from '../tensor/tensor.js';
import type { BackendRequest } from '../contract/backend.js';
import { requireInput } from './batch.js';

/** One `batch_input` entry of a normalized config. */
export type BatchInputConfig = NormalizedModelConfig['batch_input'][number];

/**
 * Every `batch_input` tensor of a config for one batch of requests, by target name:
 * tensors the backend makes because only the formed batch knows them (Triton's batch
 * inputs, mostly paired with ragged inputs). A batch input with several target names
 * gives each the same tensor.
 */
export function batchInputTensors(config: NormalizedModelConfig, requests: readonly BackendRequest[]): Record<string, Tensor> {
  const tensors: Record<string, Tensor> = {};
  for (const batchInput of config.batch_input) {
    const tensor = batchInputTensor(batchInput, requests);
    for (const target of batchInput.target_name) tensors[target] = tensor;
  }
  return tensors;
}

/**
 * One batch input, in its config's data_type (INT32 or FP32), computed from each
 * request's shape of the source input (element counts include the batch dimension):
 *
 * - BATCH_ELEMENT_COUNT `[requests]`: each request's element count;
 * - BATCH_ACCUMULATED_ELEMENT_COUNT `[requests]`: the running sum of those counts, so
 *   request i's elements of a ragged input end at entry i;
 * - BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO `[requests + 1]`: the same after a 0, so
 *   request i's elements lie between entries i and i + 1;
 * - BATCH_MAX_ELEMENT_COUNT_AS_SHAPE `[largest count]`: only the shape says something;
 *   the data is zeros;
 * - BATCH_ITEM_SHAPE `[batch items, rank - 1]`: the shape without the batch dimension,
 *   once for each batch item (a request of batch size 2 gives two rows);
 * - BATCH_ITEM_SHAPE_FLATTEN: the same values in one dimension.
 */
export function batchInputTensor(batchInput: BatchInputConfig, requests: readonly BackendRequest[]): Tensor {
  const source = batchInput.source_input[0]!;
  const shapes = requests.map((request) => requireInput(request, source).shape);
  const counts = shapes.map(elementCount);
  switch (batchInput.kind) {
    case 'BATCH_ELEMENT_COUNT':
      return filled(batchInput, [counts.length], counts);
    case 'BATCH_ACCUMULATED_ELEMENT_COUNT':
      return filled(batchInput, [counts.length], runningSum(counts));
    case 'BATCH_ACCUMULATED_ELEMENT_COUNT_WITH_ZERO':
      return filled(batchInput, [counts.length + 1], [0, ...runningSum(counts)]);
    case 'BATCH_MAX_ELEMENT_COUNT_AS_SHAPE': {
      const largest = Math.max(0, ...counts);
      return filled(batchInput, [largest], new Array<number>(largest).fill(0));
    }
    case 'BATCH_ITEM_SHAPE':
    case 'BATCH_ITEM_SHAPE_FLATTEN': {
      // The first dimension is the batch: each of its items has the rest as its shape.
      const items = shapes.flatMap((shape) => new Array<readonly number[]>(shape[0] ?? 1).fill(shape.slice(1)));
      const values = items.flat();
      const itemRank = Math.max(0, (shapes[0]?.length ?? 1) - 1);
      return filled(batchInput, batchInput.kind === 'BATCH_ITEM_SHAPE' ? [items.length, itemRank] : [values.length], values);
    }
  }
}

function filled(batchInput: BatchInputConfig, shape: number[], values: readonly number[]): Tensor {
  const datatype = dataTypeFromConfig(batchInput.data_type);
  if (datatype === 'INT32') return { datatype, shape, data: Int32Array.from(values) };
  if (datatype === 'FP32') return { datatype, shape, data: Float32Array.from(values) };
  throw new InferenceError(
    'INVALID_ARG',
    `batch input '${batchInput.target_name.join("', '")}' has data_type ${batchInput.data_type}; it must be TYPE_INT32 or TYPE_FP32`,
  );
}

function runningSum(values: readonly number[]): number[] {
  let sum = 0;
  return values.map((value) => (sum += value));
}
