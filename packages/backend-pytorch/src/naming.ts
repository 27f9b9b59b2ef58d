import { InferenceError } from '@tritium/core';

/** `<name>__<index>`: Triton's convention for a tensor's position in forward(). */
const INDEXED = /^.+__(\d+)$/;

function indexOf(name: string): number | undefined {
  const match = INDEXED.exec(name);
  return match ? Number(match[1]) : undefined;
}

/** Positions by the `<name>__<index>` convention when every name follows it. */
function byConvention(names: readonly string[]): number[] | undefined {
  const positions = names.map(indexOf);
  return positions.every((p) => p !== undefined) ? (positions as number[]) : undefined;
}

/**
 * The forward() position of each config input, by Triton's rules in order: names that
 * are forward()'s argument names, then the `<name>__<index>` convention, then the
 * config's order.
 */
export function inputPositions(model: string, names: readonly string[], argumentNames: readonly string[]): number[] {
  if (names.length !== argumentNames.length) {
    throw new InferenceError(
      'INVALID_ARG',
      `model '${model}': the configuration has ${names.length} inputs but forward() takes ${argumentNames.length} (${argumentNames.join(', ')})`,
    );
  }
  if (names.every((name) => argumentNames.includes(name))) return names.map((name) => argumentNames.indexOf(name));
  const indexed = byConvention(names);
  // Inputs fill every argument: indices that do not, fall back to the config's order.
  const fillsArguments = indexed && indexed.every((p, k) => p < names.length && indexed.indexOf(p) === k);
  return fillsArguments ? indexed : names.map((_, i) => i);
}

/**
 * The position of each config output among forward()'s tensors: the `<name>__<index>`
 * convention, else the config's order. A config may list only some of the tensors
 * (OUTPUT__2 alone is the third); a position past the last is refused at run time.
 */
export function outputPositions(names: readonly string[]): number[] {
  return byConvention(names) ?? names.map((_, i) => i);
}
