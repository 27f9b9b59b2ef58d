import type { Backend, Tensor } from '@tritium/core';
import { executeBackend } from './execute-backend.js';

/**
 * An embedding model for tests on Triton's vLLM embedding convention: `embedding_request`
 * (JSON `{input, pooling_params}`) in, the vector as JSON on `text_output`, the input's
 * word count on `num_input_tokens` when `return_num_input_tokens` asks for it. The vector
 * is [characters, words, dimensions asked for (0 when none)].
 */
export function jsonEmbeddingBackend(): Backend {
  return executeBackend('json_embedding', async (requests) =>
    requests.map((request) => {
      const { input, pooling_params: pooling } = JSON.parse(String(request.inputs.embedding_request!.data[0])) as { input: string; pooling_params: { dimensions?: number[] } };
      const words = input.split(/\s+/).filter(Boolean).length;
      const outputs: Record<string, Tensor> = { text_output: { datatype: 'BYTES', shape: [1], data: [JSON.stringify([input.length, words, pooling.dimensions?.[0] ?? 0])] } };
      if (request.inputs.return_num_input_tokens?.data[0] === 1) outputs.num_input_tokens = { datatype: 'UINT32', shape: [1], data: new Uint32Array([words]) };
      return outputs;
    }),
  );
}

export const JSON_EMBEDDING_CONFIG = `backend: "json_embedding"
max_batch_size: 0
input { name: "embedding_request" data_type: TYPE_STRING dims: [ 1 ] }
input { name: "return_num_input_tokens" data_type: TYPE_BOOL dims: [ 1 ] optional: true }
output { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] }
output { name: "num_input_tokens" data_type: TYPE_UINT32 dims: [ 1 ] }
`;
