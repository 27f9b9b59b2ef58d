import { FLAG_BITS, sumTrees } from './forest-walk.mjs';
import type { ForestArrays } from './forest-walk.mjs';
import { corruptModel } from './model-error.js';

export { CATEGORICAL, DEFAULT_LEFT, NAN_IS_MISSING, ZERO_IS_MISSING } from './forest-walk.mjs';

/*
 * A forest as flat typed arrays (no object per node), shared by every model format.
 * Node i takes two slots of `nodes`: (feature << 4 | flags), or -1 for a leaf, and the
 * index of its left child; its right child follows the left one, so a tree's
 * siblings sit side by side. threshold[i] is a split's threshold (a row goes left
 * when its value is <= it, after the missing-value rules in the flags) or a leaf's
 * value. Categorical nodes test a bitset instead.
 */

export type OutputTransform = 'identity' | 'sigmoid' | 'softmax' | 'exp' | 'square' | 'softplus';

/** The trees (ForestArrays) and what turns their sums into predictions. */
export interface Forest extends ForestArrays {
  /** Added to every group's sum before the transform. */
  readonly baseScore: number;
  /** Divide each group's sum by its tree count (random-forest mode). */
  readonly average: boolean;
  readonly transform: OutputTransform;
  /** The sigmoid's slope (LightGBM's `sigmoid:` objective argument). */
  readonly sigmoidAlpha: number;
  /** The objective predicts the class, not its probabilities (XGBoost's multi:softmax). */
  readonly predictsClass: boolean;
}

/** What a reader gives besides the trees. */
export type ForestInfo = Omit<Forest, 'roots' | 'treeGroup' | 'nodes' | 'threshold'>;

/**
 * Growable node arrays a format's reader fills tree by tree, one field per array and
 * children anywhere; build() lays the trees out compactly.
 */
export class ForestBuilder {
  private count = 0;
  private capacity = 1024;
  feature = new Int32Array(this.capacity);
  threshold = new Float64Array(this.capacity);
  left = new Int32Array(this.capacity);
  right = new Int32Array(this.capacity);
  flags = new Uint8Array(this.capacity);
  value = new Float64Array(this.capacity);
  private readonly roots: number[] = [];
  private readonly treeGroup: number[] = [];

  /** Reserves `n` nodes, leaves until set, for a new tree of the given group; returns the index of its first node (its root). */
  addTree(n: number, group: number): number {
    while (this.count + n > this.capacity) this.grow();
    const base = this.count;
    this.count += n;
    this.roots.push(base);
    this.treeGroup.push(group);
    this.feature.fill(-1, base, this.count);
    return base;
  }

  /** Lays each tree out breadth first with siblings side by side; a node reached twice (a cycle) fails the model. */
  build(info: ForestInfo, file: string): Forest {
    const placed = new Int32Array(this.count).fill(-1);
    const order: number[] = [];
    const roots = this.roots.map((root) => {
      const first = order.length;
      placed[root] = order.length;
      order.push(root);
      for (let i = first; i < order.length; i++) {
        const node = order[i]!;
        if (this.feature[node]! < 0) continue;
        for (const child of [this.left[node]!, this.right[node]!]) {
          if (placed[child] !== -1) throw corruptModel(file, `its nodes do not form trees (node ${child - root} of a tree is reached twice)`);
          placed[child] = order.length;
          order.push(child);
        }
      }
      return first;
    });
    if (this.feature.some((f) => f >= 2 ** (31 - FLAG_BITS))) throw corruptModel(file, `a split's feature index is over ${2 ** (31 - FLAG_BITS)}`);
    // A NaN threshold would send every value down the missing-value side.
    if (order.some((node) => this.feature[node]! >= 0 && Number.isNaN(this.threshold[node]!))) throw corruptModel(file, "a split's threshold is NaN");
    const nodes = new Int32Array(order.length * 2);
    const threshold = new Float64Array(order.length);
    order.forEach((node, i) => {
      const feature = this.feature[node]!;
      nodes[2 * i] = feature < 0 ? -1 : (feature << FLAG_BITS) | this.flags[node]!;
      nodes[2 * i + 1] = feature < 0 ? 0 : placed[this.left[node]!]!;
      threshold[i] = feature < 0 ? this.value[node]! : this.threshold[node]!;
    });
    return { ...info, roots: Int32Array.from(roots), treeGroup: Int32Array.from(this.treeGroup), nodes, threshold };
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

/**
 * The forest's transformed predictions for `rows` rows of `x` (row-major, numFeatures
 * per row): numGroups values per row.
 */
export function predict(forest: Forest, x: Float32Array, rows: number): Float64Array {
  const out = new Float64Array(rows * forest.numGroups);
  sumTrees(forest, x, rows, out);
  finish(forest, out, rows);
  return out;
}

/** Turns summed leaf values into predictions: base score, averaging, the objective's transform. */
export function finish(forest: Forest, out: Float64Array, rows: number): void {
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
    else if (transform === 'softplus') out[i] = Math.log1p(Math.exp(v));
  }
}

function softmax(out: Float64Array, start: number, n: number): void {
  let max = -Infinity;
  for (let i = start; i < start + n; i++) max = Math.max(max, out[i]!);
  let sum = 0;
  for (let i = start; i < start + n; i++) sum += out[i] = Math.exp(out[i]! - max);
  for (let i = start; i < start + n; i++) out[i] = out[i]! / sum;
}
