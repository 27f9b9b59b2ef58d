/** Every dimension a non-negative integer (no -1 wildcards: those belong to configs, not tensors). */
export function isValidShape(shape: unknown): shape is number[] {
  if (!Array.isArray(shape)) return false;
  for (const dim of shape) if (!Number.isInteger(dim) || dim < 0) return false;
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
