import {
  gatherBatchInput,
  scatterBatchOutputs,
  type Backend,
  type BackendRequest,
  type Tensor,
} from '@tritium/core/backend';

/**
 * A backend written in TypeScript: it serves models whose config says
 * `backend: "softmax"`, computing a softmax over the last dimension of INPUT.
 * A batch of requests is gathered into one tensor, computed once, and scattered back.
 */
export function softmaxBackend(): Backend {
  return {
    name: 'softmax',
    defaultModelFilename: 'model.json',
    async createModel(context) {
      const temperature = Number(context.config.parameters?.temperature?.string_value ?? 1);
      return {
        description: `softmax with temperature ${temperature}`,
        async createInstance() {
          return {
            async execute(requests: readonly BackendRequest[]) {
              const batch = gatherBatchInput(requests, 'INPUT');
              return scatterBatchOutputs(requests, { OUTPUT: softmax(batch, temperature) });
            },
          };
        },
      };
    },
  };
}

function softmax(input: Tensor, temperature: number): Tensor {
  const values = input.data as Float32Array;
  const width = input.shape[input.shape.length - 1]!;
  const out = new Float32Array(values.length);
  for (let row = 0; row < values.length; row += width) {
    let max = -Infinity;
    for (let i = row; i < row + width; i++) max = Math.max(max, values[i]! / temperature);
    let sum = 0;
    for (let i = row; i < row + width; i++) sum += out[i] = Math.exp(values[i]! / temperature - max);
    for (let i = row; i < row + width; i++) out[i]! /= sum;
  }
  return { datatype: 'FP32', shape: input.shape, data: out };
}
