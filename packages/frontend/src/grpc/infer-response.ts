import { tensorBytes, type InferResponse } from '@tritium/core';
import type { DeliveredOutput } from '../requested-outputs.js';
import { inferParameter, type InferParameter } from './wire-parameters.js';

/** ModelInferResponse as the loader encodes it. */
export interface InferResponseMessage {
  readonly model_name: string;
  readonly model_version: string;
  readonly id: string;
  readonly parameters?: Record<string, InferParameter>;
  readonly outputs?: readonly {
    readonly name: string;
    readonly datatype: string;
    readonly shape: readonly number[];
    readonly parameters?: Record<string, InferParameter>;
  }[];
  readonly raw_output_contents?: readonly Uint8Array[];
}

const EMPTY = new Uint8Array(0);

/**
 * A response as Triton sends it: the request's own `id` (core numbers requests that have
 * none; Triton answers those with an empty id), every output's data in
 * raw_output_contents (never typed contents), in the outputs' order. An output written
 * to shared memory keeps its place with an empty entry and says where it went in its parameters.
 */
export function encodeInferResponse(id: string, response: InferResponse, outputs: readonly DeliveredOutput[], parameters?: Record<string, InferParameter>): InferResponseMessage {
  return {
    model_name: response.modelName,
    model_version: String(response.modelVersion),
    id,
    parameters,
    outputs: outputs.map(({ name, tensor, sharedMemory }) => ({
      name,
      datatype: tensor.datatype,
      shape: tensor.shape,
      parameters: sharedMemory && {
        shared_memory_region: inferParameter(sharedMemory.region),
        shared_memory_byte_size: inferParameter(sharedMemory.byteSize),
        ...(sharedMemory.offset > 0 && { shared_memory_offset: inferParameter(sharedMemory.offset) }),
      },
    })),
    raw_output_contents: outputs.map(({ tensor, sharedMemory }) => (sharedMemory ? EMPTY : tensorBytes(tensor))),
  };
}
