import { InferenceError, elementCount, shapeMatches } from '@tritium/core';

/**
 * Gives a tensor shape the per-item dims `target` (a config `reshape` or `dims`, -1
 * for variable), keeping the batch dimension when there is one. A shape that already
 * fits `target` is kept; otherwise a single -1 is solved from the element count.
 */
export function reshapeItems(shape: readonly number[], batching: boolean, target: readonly number[], what: string): number[] {
  const lead = batching ? shape.slice(0, 1) : [];
  const items = batching ? shape.slice(1) : shape;
  if (shapeMatches(items, target)) return [...shape];
  const count = elementCount(items);
  const wildcards = target.filter((d) => d === -1).length;
  const known = elementCount(target.filter((d) => d !== -1));
  if (wildcards === 0 && known === count) return [...lead, ...target];
  if (wildcards === 1 && known > 0 && count % known === 0) return [...lead, ...target.map((d) => (d === -1 ? count / known : d))];
  if (wildcards === 1 && known === 0 && count === 0) return [...lead, ...target.map((d) => (d === -1 ? 0 : d))];
  throw new InferenceError('INVALID_ARG', `${what}: cannot reshape [${items.join(',')}] to [${target.join(',')}]`);
}
