import { createHash } from 'node:crypto';
import type { Tensor } from '../tensor/tensor.js';
import { tensorBytes } from '../tensor/data.js';

/**
 * The response cache's key: the model, its version, every input's name, datatype, shape
 * and bytes, and the requested outputs, hashed (SHA-256). Stricter than Triton's, which
 * hashes input names and bytes only, so two requests that differ only in shape or
 * datatype never share an entry here.
 */
export function cacheKey(model: string, version: number, inputs: Readonly<Record<string, Tensor>>, requestedOutputs: readonly string[]): string {
  const hash = createHash('sha256');
  hash.update(`${model}\0${version}\0`);
  for (const name of Object.keys(inputs).sort()) {
    const tensor = inputs[name]!;
    hash.update(`${name}\0${tensor.datatype}\0${tensor.shape.join(',')}\0`);
    hash.update(tensorBytes(tensor));
  }
  hash.update([...requestedOutputs].sort().join('\0'));
  return hash.digest('hex');
}
