import { InferenceError } from '../errors.js';
import { concatTensorData, sliceTensorData } from '../tensor/data.js';
import { typedArrayConstructor, type DataType, type TensorData } from '../tensor/datatype.js';
import { elementCount, shapeToString } from '../tensor/shape.js';
import type { Tensor } from '../tensor/tensor.js';
import type { BackendRequest } from '../contract/backend.js';
import type { BatchBuffers, LendingRequest } from './batch-buffers.js';

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
 * unless the input is ragged. During an execution the joined data lies in memory
 * the instance runner lends (BatchBuffers): a backend may use it until its execute
 * returns, and an output it returns may share it.
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
  const buffers = (requests[0] as LendingRequest).batchBuffers;
  const data = buffers ? concatTensorData(first.datatype, parts, lentData(buffers)) : concatTensorData(first.datatype, parts);
  return { datatype: first.datatype, shape: ragged ? [data.length] : [rows, ...first.shape.slice(1)], data };
}

/** Typed arrays in memory `buffers` lend (BYTES never reaches it: concatTensorData joins those itself). */
function lentData(buffers: BatchBuffers) {
  return <T extends DataType>(datatype: T, length: number): TensorData<T> => {
    const TypedArray = typedArrayConstructor(datatype)!;
    return new TypedArray(buffers.take(length * TypedArray.BYTES_PER_ELEMENT), 0, length) as TensorData<T>;
  };
}

/**
 * Splits a batch's outputs back into one output map per request, by each request's
 * batch size (the inverse of gatherBatchInput). Slices share the output's memory.
 */
export function scatterBatchOutputs(
  requests: readonly BackendRequest[],
  outputs: Readonly<Record<string, Tensor>>,
): Record<string, Tensor>[] {
  let total = 0;
  for (const request of requests) total += request.batchSize;
  const perRequest = new Array<Record<string, Tensor>>(requests.length);
  for (let i = 0; i < requests.length; i++) perRequest[i] = {};
  for (const name in outputs) {
    const tensor = outputs[name]!;
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
    const { datatype, shape, data } = tensor;
    const rowLength = elementCount(shape) / total;
    let offset = 0;
    for (let i = 0; i < requests.length; i++) {
      const rows = requests[i]!.batchSize;
      const end = offset + rows * rowLength;
      // Each piece gets a shape array of its own: callers may change theirs.
      const pieceShape = shape.slice();
      pieceShape[0] = rows;
      perRequest[i]![name] = { datatype, shape: pieceShape, data: sliceTensorData(datatype, data, offset, end) };
      offset = end;
    }
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
