import { InferenceError } from '@tritium/core/backend';

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

/** One of forward()'s arguments after self, its type as Python annotates it. */
export interface ForwardArgument {
  readonly name: string;
  readonly type: string;
}

/** How a model's input tensors reach forward(): each at a position, or all in one Dict[str, Tensor] by name. */
export type InputBinding = { readonly dict: true } | { readonly dict: false; readonly positions: readonly number[] };

/**
 * Binds the tensors a model feeds forward() to its arguments, by Triton's rules.
 * `inputs` (the config's inputs, then its batch inputs' targets) go by forward()'s
 * argument names when all are among them, else by the `<name>__<index>` convention,
 * else in order; sequence `controls` must follow the convention. A forward() taking a
 * single Dict[str, Tensor] gets every tensor in it by name.
 */
export function bindInputs(model: string, inputs: readonly string[], controls: readonly string[], args: readonly ForwardArgument[]): InputBinding {
  const fail = (message: string) => new InferenceError('INVALID_ARG', `model '${model}': ${message}`);
  if (args.length === 1 && args[0]!.type === 'Dict[str, Tensor]') return { dict: true };
  const other = args.find((arg) => arg.type !== 'Tensor' && !arg.type.startsWith('List['));
  if (other) throw fail(`forward() argument '${other.name}' is ${other.type}; the backend passes Tensor and List[str] arguments, or one Dict[str, Tensor]`);
  const count = inputs.length + controls.length;
  if (count !== args.length) {
    throw fail(`the configuration feeds forward() ${count} tensors but it takes ${args.length} (${args.map((arg) => arg.name).join(', ')})`);
  }
  const controlPositions = controls.map((name) => {
    const index = indexOf(name);
    if (index === undefined) throw fail(`sequence control input '${name}' does not follow the <name>__<index> naming convention`);
    return index;
  });
  const argumentNames = args.map((arg) => arg.name);
  const inputPositions = inputs.every((name) => argumentNames.includes(name))
    ? inputs.map((name) => argumentNames.indexOf(name))
    : (byConvention(inputs) ?? inputs.map((_, i) => i));
  const positions = [...inputPositions, ...controlPositions];
  const names = [...inputs, ...controls];
  positions.forEach((position, k) => {
    if (position >= count) throw fail(`input '${names[k]}' is forward() argument ${position}, but it takes ${count}`);
    const first = positions.indexOf(position);
    if (first !== k) throw fail(`inputs '${names[first]}' and '${names[k]}' are both forward() argument ${position}`);
  });
  return { dict: false, positions };
}

/**
 * The position of each config output among forward()'s tensors: the `<name>__<index>`
 * convention, else the config's order. A config may list only some of the tensors
 * (OUTPUT__2 alone is the third); a position past the last is refused at run time.
 */
export function outputPositions(names: readonly string[]): number[] {
  return byConvention(names) ?? names.map((_, i) => i);
}
