import { InferenceError } from '../errors.js';
import { concatTensorData, sliceTensorData } from '../tensor/data.js';
import { elementCount, shapeToString } from '../tensor/shape.js';
import type { Tensor } from '../tensor/tensor.js';
import type { BackendRequest } from './backend.js';

/** How gatherBatchInput joins an input. */
export interface GatherOptions {
  /**
   * The input allows a ragged batch (`allow_ragged_batch`): the requests' tensors may
   * differ in shape and are joined end to end into one dimension, as Triton's backends
   * give a ragged input to the model (the model finds each request's part through a
   * batch input, see batchInputTensors).
   */
  readonly ragged?: boolean;
}

/**
 * Joins one input of several requests along the batch dimension, for a backend
 * that runs a batch in one call. The requests must agree on every other dimension,
 * unless the input is ragged.
 */
export function gatherBatchInput(requests: readonly BackendRequest[], name: string, options: GatherOptions = {}): Tensor {
  const first = requireInput(requests[0]!, name);
  const ragged = options.ragged ?? false;
  if (requests.length === 1) return ragged ? { ...first, shape: [first.data.length] } : first;
  const parts = [first.data];
  let rows = first.shape[0] ?? 1;
  for (let i = 1; i < requests.length; i++) {
    const tensor = requireInput(requests[i]!, name);
    if (tensor.datatype !== first.datatype || (!ragged && !sameTail(tensor.shape, first.shape))) {
      throw new InferenceError(
        'INVALID_ARG',
        `input '${name}': cannot batch shape ${shapeToString(tensor.shape)} (${tensor.datatype}) with ${shapeToString(first.shape)} (${first.datatype})`,
      );
    }
    rows += tensor.shape[0] ?? 1;
    parts.push(tensor.data);
  }
  const data = concatTensorData(first.datatype, parts);
  return { datatype: first.datatype, shape: ragged ? [data.length] : [rows, ...first.shape.slice(1)], data };
}

/**
 * Splits a batch's outputs back into one output map per request, by each request's
 * batch size (the inverse of gatherBatchInput). Slices share the output's memory.
 */
export function scatterBatchOutputs(
  requests: readonly BackendRequest[],
  outputs: Readonly<Record<string, Tensor>>,
): Record<string, Tensor>[] {
  const total = requests.reduce((sum, request) => sum + request.batchSize, 0);
  const perRequest = requests.map(() => ({}) as Record<string, Tensor>);
  for (const [name, tensor] of Object.entries(outputs)) {
    if (tensor.shape[0] !== total) {
      throw new InferenceError(
        'INTERNAL',
        `model '${requests[0]!.modelName}' output '${name}': batch dimension is ${tensor.shape[0]}, expected ${total} for ${requests.length} request(s)`,
      );
    }
    if (requests.length === 1) {
      perRequest[0]![name] = tensor;
      continue;
    }
    const tail = tensor.shape.slice(1);
    splitByShapes(tensor, requests.map((request) => [request.batchSize, ...tail])).forEach((piece, i) => (perRequest[i]![name] = piece));
  }
  return perRequest;
}

/** Cuts a tensor's data end to end into pieces of the given shapes (which must add up to it); pieces share its memory. */
export function splitByShapes(tensor: Tensor, shapes: readonly number[][]): Tensor[] {
  let offset = 0;
  return shapes.map((shape) => {
    const end = offset + elementCount(shape);
    const piece: Tensor = { datatype: tensor.datatype, shape, data: sliceTensorData(tensor.datatype, tensor.data, offset, end) };
    offset = end;
    return piece;
  });
}

/** A request's input, or INVALID_ARG naming the request. */
export function requireInput(request: BackendRequest, name: string): Tensor {
  const tensor = request.inputs[name];
  if (!tensor) throw new InferenceError('INVALID_ARG', `${request.modelName}: request '${request.id}' has no input '${name}'`);
  return tensor;
}

function sameTail(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 1; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
