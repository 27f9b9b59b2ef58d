import type { NormalizedModelConfig } from '../config/schema.js';
import { InferenceError } from '../errors.js';
import { elementCount, shapeToString } from '../tensor/shape.js';
import type { Tensor } from '../tensor/tensor.js';
import type { BackendRequest } from '../contract/backend.js';
import { requireInput, splitByShapes } from './batch.js';

/**
 * Splits one output of a batch that the config names in a `batch_output` of kind
 * BATCH_SCATTER_WITH_INPUT_SHAPE into one tensor per request. Each request's shape is
 * the output's config dims, after a batch dimension when the model batches, with every
 * variable (-1) dimension taken from the request's source input at the same position;
 * the model's output is read end to end in request order, whatever its own shape. This
 * is how an output of a ragged batch finds its way back. Slices share the output's memory.
 */
export function scatterWithInputShape(
  config: NormalizedModelConfig,
  requests: readonly BackendRequest[],
  name: string,
  tensor: Tensor,
): Tensor[] {
  const what = `model '${config.name}' output '${name}'`;
  const batchOutput = config.batch_output.find((b) => b.target_name.includes(name));
  const output = config.output.find((o) => o.name === name);
  if (!batchOutput || !output) throw new InferenceError('INTERNAL', `${what} is not a batch output of the configuration`);
  const template = [...(config.max_batch_size > 0 ? [-1] : []), ...output.dims];
  const source = batchOutput.source_input[0]!;
  const shapes = requests.map((request) => {
    const input = requireInput(request, source).shape;
    if (template.some((dim, i) => dim === -1 && input[i] === undefined)) {
      throw new InferenceError('INVALID_ARG', `${what}: shape ${shapeToString(template)} has more dimensions than input '${source}' ${shapeToString(input)} to take from`);
    }
    return template.map((dim, i) => (dim === -1 ? input[i]! : dim));
  });
  const total = shapes.reduce((sum, shape) => sum + elementCount(shape), 0);
  if (total !== tensor.data.length) {
    throw new InferenceError(
      'INTERNAL',
      `${what}: the model returned ${tensor.data.length} elements (shape ${shapeToString(tensor.shape)}), ` +
        `but the shapes of input '${source}' ask for ${total} (${shapes.map(shapeToString).join(', ')})`,
    );
  }
  return splitByShapes(tensor, shapes);
}
