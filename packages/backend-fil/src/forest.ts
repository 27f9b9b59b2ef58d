/*
 * A forest as flat typed arrays (no object per node), shared by every model format.
 * Node i is a leaf when feature[i] < 0, its value in value[i]; otherwise a row goes to
 * left[i] when its feature value is <= threshold[i], else to right[i], after the
 * missing-value rules in flags[i]. Categorical nodes test a bitset instead.
 */

/** A NaN goes down the node's default side (else it is compared as 0). */
export const NAN_IS_MISSING = 1;
/** The default side is left. */
export const DEFAULT_LEFT = 2;
/** A zero (|x| <= 1e-35, and a NaN read as 0) goes down the default side (LightGBM's zero_as_missing). */
export const ZERO_IS_MISSING = 4;
/** The node tests membership of a category set: member goes left, others (and NaN, negatives) right. */
export const CATEGORICAL = 8;

/** LightGBM's kZeroThreshold. */
const ZERO_THRESHOLD = 1e-35;

export type OutputTransform = 'identity' | 'sigmoid' | 'softmax' | 'exp' | 'square';

export interface Forest {
  readonly numFeatures: number;
  /** Output groups: 1 for regression and binary, the class count for multi-class. */
  readonly numGroups: number;
  readonly roots: Int32Array;
  /** The group each tree adds to. */
  readonly treeGroup: Int32Array;
  readonly feature: Int32Array;
  readonly threshold: Float64Array;
  readonly left: Int32Array;
  readonly right: Int32Array;
  readonly flags: Uint8Array;
  readonly value: Float64Array;
  /** For a categorical node, threshold holds k: its bitset is categoryBits[categoryBounds[k] .. categoryBounds[k + 1]). */
  readonly categoryBounds: Int32Array;
  readonly categoryBits: Uint32Array;
  /** Added to every group's sum before the transform. */
  readonly baseScore: number;
  /** Divide each group's sum by its tree count (random-forest mode). */
  readonly average: boolean;
  readonly transform: OutputTransform;
  /** The sigmoid's slope (LightGBM's `sigmoid:` objective argument). */
  readonly sigmoidAlpha: number;
}

/** Growable flat node arrays, filled tree by tree by a format's reader. */
export class ForestBuilder {
  private count = 0;
  private capacity = 1024;
  feature = new Int32Array(this.capacity);
  threshold = new Float64Array(this.capacity);
  left = new Int32Array(this.capacity);
  right = new Int32Array(this.capacity);
  flags = new Uint8Array(this.capacity);
  value = new Float64Array(this.capacity);
  readonly roots: number[] = [];
  readonly treeGroup: number[] = [];

  /** Reserves `n` nodes for a new tree of the given group; returns the index of its first node (its root). */
  addTree(n: number, group: number): number {
    while (this.count + n > this.capacity) this.grow();
    const base = this.count;
    this.count += n;
    this.roots.push(base);
    this.treeGroup.push(group);
    this.feature.fill(-1, base, this.count);
    return base;
  }

  build(rest: Omit<Forest, 'roots' | 'treeGroup' | 'feature' | 'threshold' | 'left' | 'right' | 'flags' | 'value'>): Forest {
    const n = this.count;
    return {
      ...rest,
      roots: Int32Array.from(this.roots),
      treeGroup: Int32Array.from(this.treeGroup),
      feature: this.feature.slice(0, n),
      threshold: this.threshold.slice(0, n),
      left: this.left.slice(0, n),
      right: this.right.slice(0, n),
      flags: this.flags.slice(0, n),
      value: this.value.slice(0, n),
    };
  }

  private grow(): void {
    this.capacity *= 2;
    const grown = <T extends Int32Array | Float64Array | Uint8Array>(a: T): T => {
      const b = new (a.constructor as new (n: number) => T)(this.capacity);
      b.set(a);
      return b;
    };
    this.feature = grown(this.feature);
    this.threshold = grown(this.threshold);
    this.left = grown(this.left);
    this.right = grown(this.right);
    this.flags = grown(this.flags);
    this.value = grown(this.value);
  }
}

/** The leaf a row (features at `x[offset ..]`) reaches in the tree rooted at `node`. */
function leafOf(forest: Forest, node: number, x: Float32Array, offset: number): number {
  const { feature, threshold, left, right, flags } = forest;
  let f = feature[node]!;
  while (f >= 0) {
    const flag = flags[node]!;
    let v = x[offset + f]!;
    if (flag & CATEGORICAL) {
      node = inCategorySet(forest, threshold[node]!, v) ? left[node]! : right[node]! ;
    } else if (v !== v && flag & NAN_IS_MISSING) {
      node = flag & DEFAULT_LEFT ? left[node]! : right[node]!;
    } else {
      if (v !== v) v = 0;
      if (flag & ZERO_IS_MISSING && Math.abs(v) <= ZERO_THRESHOLD) node = flag & DEFAULT_LEFT ? left[node]! : right[node]!;
      else node = v <= threshold[node]! ? left[node]! : right[node]!;
    }
    f = feature[node]!;
  }
  return node;
}

function inCategorySet(forest: Forest, k: number, v: number): boolean {
  if (!(v >= 0)) return false;
  const category = Math.trunc(v);
  const word = forest.categoryBounds[k]! + (category >>> 5);
  if (category >= 2 ** 31 || word >= forest.categoryBounds[k + 1]!) return false;
  return ((forest.categoryBits[word]! >>> (category & 31)) & 1) === 1;
}

/**
 * The forest's transformed predictions for `rows` rows of `x` (row-major, numFeatures
 * per row): numGroups values per row.
 */
export function predict(forest: Forest, x: Float32Array, rows: number): Float64Array {
  const { numGroups, numFeatures, roots, treeGroup, value } = forest;
  const out = new Float64Array(rows * numGroups);
  const trees = roots.length;
  for (let r = 0; r < rows; r++) {
    const offset = r * numFeatures;
    const base = r * numGroups;
    for (let t = 0; t < trees; t++) out[base + treeGroup[t]!]! += value[leafOf(forest, roots[t]!, x, offset)]!;
  }
  finish(forest, out, rows);
  return out;
}

function finish(forest: Forest, out: Float64Array, rows: number): void {
  const { numGroups, baseScore, transform, sigmoidAlpha } = forest;
  const perGroup = forest.average ? forest.roots.length / numGroups : 1;
  for (let i = 0; i < out.length; i++) out[i] = out[i]! / perGroup + baseScore;
  if (transform === 'softmax') {
    for (let r = 0; r < rows; r++) softmax(out, r * numGroups, numGroups);
    return;
  }
  for (let i = 0; i < out.length; i++) {
    const v = out[i]!;
    if (transform === 'sigmoid') out[i] = 1 / (1 + Math.exp(-sigmoidAlpha * v));
    else if (transform === 'exp') out[i] = Math.exp(v);
    else if (transform === 'square') out[i] = Math.sign(v) * v * v;
  }
}

function softmax(out: Float64Array, start: number, n: number): void {
  let max = -Infinity;
  for (let i = start; i < start + n; i++) max = Math.max(max, out[i]!);
  let sum = 0;
  for (let i = start; i < start + n; i++) sum += out[i] = Math.exp(out[i]! - max);
  for (let i = start; i < start + n; i++) out[i] = out[i]! / sum;
}
