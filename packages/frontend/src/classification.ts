import { InferenceError, type Tensor } from '@tritium/core';

/**
 * Triton's classification extension: for each batch entry (or the whole tensor of a
 * model without batching), the `count` largest values as "value:index" strings, with
 * ":label" where the output has a label for that index. Values print as C's `%f`.
 */
export function classify(name: string, tensor: Tensor, count: number, batched: boolean, labels: readonly string[] | undefined): Tensor<'BYTES'> {
  if (tensor.datatype === 'BYTES') throw new InferenceError('INVALID_ARG', `output '${name}': classification needs a numeric output, not BYTES`);
  const values = tensor.data as ArrayLike<number | bigint>;
  const rows = batched ? (tensor.shape[0] ?? 0) : 1;
  const classes = rows === 0 ? 0 : values.length / rows;
  const k = Math.min(count, classes);
  const data: string[] = [];
  for (let row = 0; row < rows; row++) {
    const base = row * classes;
    const order = Array.from({ length: classes }, (_, i) => i);
    // Largest first; ties keep the lower index first, so the order is stable.
    order.sort((a, b) => Number(values[base + b]) - Number(values[base + a]) || a - b);
    for (const index of order.slice(0, k)) {
      const label = labels?.[index];
      data.push(`${Number(values[base + index]).toFixed(6)}:${index}${label ? `:${label}` : ''}`);
    }
  }
  return { datatype: 'BYTES', shape: batched ? [rows, k] : [k], data };
}
