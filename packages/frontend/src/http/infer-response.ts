import { tensorBytes, type InferResponse } from '@tritium/core';
import type { DeliveredOutput } from '../requested-outputs.js';
import { isBinaryOutput, type HttpInferRequest } from './infer-request.js';
import { jsonDataText } from './json-tensor-data.js';

/** A response as it goes on the wire: the JSON, then each binary output's bytes in the JSON's order. */
export interface EncodedInferResponse {
  readonly json: string;
  /** Views on the outputs' own memory (no copy), except BYTES, which are serialized. */
  readonly binary: Uint8Array[];
}

/**
 * Writes Triton's inference response JSON as text, with no intermediate object per
 * output or element: `id` as idMember writes it, `model_version` as a string,
 * and per output its data (JSON), its `binary_data_size` (binary data extension) or
 * where it was written (shared memory).
 */
export function encodeInferResponse(response: InferResponse, outputs: readonly DeliveredOutput[], request: HttpInferRequest): EncodedInferResponse {
  const binary: Uint8Array[] = [];
  let json = `{${idMember(request.request.id)}"model_name":${JSON.stringify(response.modelName)},"model_version":"${response.modelVersion}","outputs":[`;
  outputs.forEach(({ name, tensor, sharedMemory }, index) => {
    json += `${index ? ',' : ''}{"name":${JSON.stringify(name)},"datatype":"${tensor.datatype}","shape":[${tensor.shape.join(',')}],`;
    if (sharedMemory) {
      const { region, offset, byteSize } = sharedMemory;
      json += `"parameters":{"shared_memory_region":${JSON.stringify(region)},"shared_memory_offset":${offset},"shared_memory_byte_size":${byteSize}}}`;
    } else if (isBinaryOutput(request, name)) {
      const bytes = tensorBytes(tensor);
      if (bytes.length > 0) binary.push(bytes);
      json += `"parameters":{"binary_data_size":${bytes.length}}}`;
    } else {
      json += `"data":${jsonDataText(tensor)}}`;
    }
  });
  return { json: `${json}]}`, binary };
}

/** A response's `"id":...,` member: the request's own id, and only one that is not empty, as Triton writes it. */
export function idMember(id: string | undefined): string {
  return id ? `"id":${JSON.stringify(id)},` : '';
}
