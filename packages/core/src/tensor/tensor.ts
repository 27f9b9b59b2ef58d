import type { DataType, TensorData } from './datatype.js';

/** A checked tensor: data is the datatype's canonical form and matches the shape. */
export interface Tensor<T extends DataType = DataType> {
  datatype: T;
  shape: number[];
  data: TensorData<T>;
}

/** What a caller may pass: plain arrays are converted to the canonical typed array. */
export interface TensorInput {
  datatype: DataType;
  shape: readonly number[];
  data: TensorData | readonly number[] | readonly bigint[] | readonly boolean[] | readonly string[];
}

/** Whom a tensor belongs to, for error messages. */
export type TensorRole = 'input' | 'output';
