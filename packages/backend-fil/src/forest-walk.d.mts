/** What sumTrees reads of a forest (see Forest in forest.ts). */
export interface ForestArrays {
  readonly numFeatures: number;
  /** Output groups: 1 for regression and binary, the class count for multi-class. */
  readonly numGroups: number;
  readonly roots: Int32Array;
  /** The group each tree adds to. */
  readonly treeGroup: Int32Array;
  readonly nodes: Int32Array;
  readonly threshold: Float64Array;
  /** For a categorical node, threshold holds k: its bitset is categoryBits[categoryBounds[k] .. categoryBounds[k + 1]). */
  readonly categoryBounds: Int32Array;
  readonly categoryBits: Uint32Array;
}

export const NAN_IS_MISSING: 1;
export const DEFAULT_LEFT: 2;
export const ZERO_IS_MISSING: 4;
export const CATEGORICAL: 8;
export const FLAG_BITS: 4;

/** Adds each tree's leaf value for `rows` rows of `x` (row-major) into `out` (numGroups per row), untransformed. */
export function sumTrees(forest: ForestArrays, x: Float32Array, rows: number, out: Float64Array): void;
