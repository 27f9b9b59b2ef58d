/**
 * The largest tensor dimension: INT32_MAX. Triton's dims are int64, but onnxruntime-node
 * refuses a dim of 2^32 or more, TensorRT's dims were int32, and a JavaScript typed array
 * holds fewer elements anyway; one bound for every backend keeps a shape like
 * `[2**32, 0]` (no elements, but dims no runtime takes) at the door.
 */
export const MAX_DIM = 2 ** 31 - 1;

/** Every dimension an integer from 0 to MAX_DIM (no -1 wildcards: those belong to configs, not tensors). */
export function isValidShape(shape: unknown): shape is number[] {
  if (!Array.isArray(shape)) return false;
  for (const dim of shape) if (!Number.isInteger(dim) || dim < 0 || dim > MAX_DIM) return false;
  return true;
}

/** The product of the dimensions; 1 for a scalar's empty shape. */
export function elementCount(shape: readonly number[]): number {
  let count = 1;
  for (const dim of shape) count *= dim;
  return count;
}

/** `[4,4]`, as error messages print shapes. */
export function shapeToString(shape: readonly number[]): string {
  return `[${shape.join(',')}]`;
}

/** Whether a tensor's shape fits config dims, where -1 matches any size. */
export function shapeMatches(shape: readonly number[], dims: readonly number[]): boolean {
  if (shape.length !== dims.length) return false;
  for (let i = 0; i < shape.length; i++) if (dims[i] !== -1 && dims[i] !== shape[i]) return false;
  return true;
}

/**
 * Reads `shape`, which fits `from`, in the form `to`: each variable (-1) dimension of
 * `to` takes, in order, the size `shape` has where `from` is variable. This is how
 * Triton's `reshape` relates to `dims` (config validation makes the two agree on how
 * many variable dimensions they have and on the sizes between them).
 */
export function mapVariableDims(shape: readonly number[], from: readonly number[], to: readonly number[]): number[] {
  const variable: number[] = [];
  for (let i = 0; i < from.length; i++) if (from[i] === -1) variable.push(shape[i]!);
  let next = 0;
  return to.map((dim) => (dim === -1 ? variable[next++]! : dim));
}
