import { InferenceError } from '../errors.js';
import { concatTensorData, sliceTensorData } from '../tensor/data.js';
import { elementCount, shapeToString } from '../tensor/shape.js';
import type { Tensor } from '../tensor/tensor.js';
import type { BackendRequest } from './backend.js';

/**
 * Joins one input of several requests along the batch dimension, for a backend
 * that runs a batch in one call. The requests must agree on every other dimension.
 */
export function gatherBatchInput(requests: readonly BackendRequest[], name: string): Tensor {
  const first = requireInput(requests[0]!, name);
  if (requests.length === 1) return first;
  const parts = [first.data];
  let rows = first.shape[0] ?? 1;
  for (let i = 1; i < requests.length; i++) {
    const tensor = requireInput(requests[i]!, name);
    if (tensor.datatype !== first.datatype || !sameTail(tensor.shape, first.shape)) {
      throw new InferenceError(
        'INVALID_ARG',
        `input '${name}': cannot batch shape ${shapeToString(tensor.shape)} (${tensor.datatype}) with ${shapeToString(first.shape)} (${first.datatype})`,
      );
    }
    rows += tensor.shape[0] ?? 1;
    parts.push(tensor.data);
  }
  return { datatype: first.datatype, shape: [rows, ...first.shape.slice(1)], data: concatTensorData(first.datatype, parts) };
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
    const rowSize = total === 0 ? 0 : elementCount(tensor.shape) / total;
    let offset = 0;
    requests.forEach((request, i) => {
      const end = offset + request.batchSize * rowSize;
      perRequest[i]![name] = {
        datatype: tensor.datatype,
        shape: [request.batchSize, ...tensor.shape.slice(1)],
        data: sliceTensorData(tensor.datatype, tensor.data, offset, end),
      };
      offset = end;
    });
  }
  return perRequest;
}

function requireInput(request: BackendRequest, name: string): Tensor {
  const tensor = request.inputs[name];
  if (!tensor) throw new InferenceError('INVALID_ARG', `${request.modelName}: request '${request.id}' has no input '${name}'`);
  return tensor;
}

function sameTail(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 1; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
