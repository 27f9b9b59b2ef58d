import type { ModelConfig } from './schema.js';

/**
 * The full shape of a model's tensor as requests and responses carry it: the config's
 * dims, after a -1 batch dimension when the model batches (max_batch_size > 0).
 */
export function requestShape(config: ModelConfig, tensor: { readonly dims?: readonly number[] }): number[] {
  const dims = (tensor.dims ?? []).map(Number);
  return (config.max_batch_size ?? 0) > 0 ? [-1, ...dims] : dims;
}
