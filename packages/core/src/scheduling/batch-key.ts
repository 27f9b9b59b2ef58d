import type { NormalizedModelConfig } from '../config/schema.js';
import type { InferenceRequest } from './inference-request.js';

/**
 * Which requests may share a batch, as a string: requests run together only when
 * their inputs with variable dims have the same shape (except inputs that allow
 * ragged batching) and they carry the same optional inputs. Undefined for a model
 * where every request fits with every other (fixed shapes, nothing optional): the
 * common case pays nothing.
 */
export function batchKeyFor(config: NormalizedModelConfig): ((request: InferenceRequest) => string) | undefined {
  const variable = config.input.filter((input) => !input.allow_ragged_batch && (input.reshape?.shape ?? input.dims).some((dim) => dim === -1));
  const optional = config.input.filter((input) => input.optional);
  if (variable.length === 0 && optional.length === 0) return undefined;
  const lead = config.max_batch_size > 0 ? 1 : 0;
  return (request) => {
    let key = '';
    for (const input of variable) key += `${request.inputs[input.name]?.shape.slice(lead).join('x') ?? '-'};`;
    for (const input of optional) key += input.name in request.inputs ? '1' : '0';
    return key;
  };
}
