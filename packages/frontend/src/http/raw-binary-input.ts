import type { Buffer } from 'node:buffer';
import { dataTypeFromConfig, elementByteSize, tensorFromBytes, type CallerTrace, type InferenceServer, type TensorInput } from '@tritium/core';
import { invalid } from '../wire-values.js';
import type { HttpInferRequest } from './infer-request.js';

/**
 * Triton's raw binary request (Inference-Header-Content-Length: 0): the whole body is
 * the bytes of the model's only input, whose datatype and shape come from the config
 * (batch size 1, and at most one variable dimension, sized to the body). A BYTES input
 * takes the body as its one element. Every output comes back as binary data.
 */
export function rawBinaryRequest(server: InferenceServer, model: string, modelVersion: number | undefined, body: Buffer, trace: CallerTrace | undefined): HttpInferRequest {
  const { inputs, maxBatchSize } = server.modelFacts(model, modelVersion);
  const [input] = inputs;
  if (input === undefined || inputs.length !== 1) {
    throw invalid(`Raw request must only have 1 input (found 1) to be deduced but got ${inputs.length} inputs in '${model}' model configuration`);
  }
  const name = input.name!;
  const datatype = dataTypeFromConfig(input.data_type!);
  const dims = (input.dims ?? []).map(Number);
  const shape = maxBatchSize > 0 ? [1, ...dims] : dims;
  const variable = shape.indexOf(-1);
  if (variable !== shape.lastIndexOf(-1)) {
    throw invalid(`The shape of the raw input '${name}' can not be deduced because there are more than one variable-sized dimension`);
  }
  let tensor: TensorInput;
  if (datatype === 'BYTES') {
    if (variable !== -1 || shape.some((dim) => dim !== 1)) throw invalid(`For BYTE datatype raw input '${name}', the model must have input shape [1]`);
    tensor = { datatype, shape, data: [body] };
  } else {
    if (variable !== -1) {
      const unit = shape.reduce((bytes, dim) => (dim === -1 ? bytes : bytes * dim), elementByteSize(datatype)!);
      // A body that is not a whole number of units fails tensorFromBytes' size check, naming the input.
      shape[variable] = unit === 0 ? 0 : Math.floor(body.length / unit);
    }
    tensor = tensorFromBytes(name, datatype, shape, body, 'view');
  }
  return { request: { inputs: { [name]: tensor }, modelVersion, trace }, outputs: undefined, binaryOutputs: true };
}
