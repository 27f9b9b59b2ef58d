import { DEFAULT_LEFT, ForestBuilder, NAN_IS_MISSING } from './forest.js';
import type { Forest, OutputTransform } from './forest.js';
import { corruptModel, unsupportedModel } from './model-error.js';

/*
 * An XGBoost tree model as both its formats (JSON, legacy binary) hold it: per tree,
 * parallel node arrays where a node is a leaf when its left child is -1, its value in
 * condition; otherwise a row goes left when its value < condition (float32), and a
 * NaN goes the defaultLeft way. base_score is in the objective's output space.
 */

export interface XgboostTree {
  readonly left: ArrayLike<number>;
  readonly right: ArrayLike<number>;
  readonly feature: ArrayLike<number>;
  readonly condition: ArrayLike<number>;
  readonly defaultLeft: ArrayLike<number>;
}

export interface XgboostModel {
  readonly numFeatures: number;
  /** num_class (0 for one output) or num_target, whichever is larger. */
  readonly numGroups: number;
  readonly objective: string;
  readonly baseScore: number;
  readonly trees: readonly XgboostTree[];
  /** The output group of each tree (tree_info). */
  readonly treeGroups: ArrayLike<number>;
  /** A dart booster's per-tree weights (weight_drop). */
  readonly weights?: ArrayLike<number>;
}

type Objective = { transform: OutputTransform; margin: (p: number) => number };
const IDENTITY: Objective = { transform: 'identity', margin: (p) => p };
const LOGISTIC: Objective = { transform: 'sigmoid', margin: (p) => -Math.log(1 / p - 1) };
const SOFTMAX: Objective = { transform: 'softmax', margin: (p) => p };
const EXP: Objective = { transform: 'exp', margin: Math.log };

/** Per objective: the output transform and how base_score becomes a margin (XGBoost's ProbToMargin). */
const OBJECTIVES: Readonly<Record<string, Objective>> = {
  'reg:squarederror': IDENTITY,
  'reg:linear': IDENTITY,
  'reg:squaredlogerror': IDENTITY,
  'reg:pseudohubererror': IDENTITY,
  'reg:absoluteerror': IDENTITY,
  'reg:quantileerror': IDENTITY,
  'binary:logitraw': IDENTITY,
  'rank:pairwise': IDENTITY,
  'rank:ndcg': IDENTITY,
  'rank:map': IDENTITY,
  'binary:logistic': LOGISTIC,
  'reg:logistic': LOGISTIC,
  'multi:softprob': SOFTMAX,
  // Softmax gives the probabilities FIL's predict_proba returns; the class is their argmax (Forest.predictsClass).
  'multi:softmax': SOFTMAX,
  'count:poisson': EXP,
  'reg:gamma': EXP,
  'reg:tweedie': EXP,
  'survival:cox': EXP,
};

/** The booster's name, where its model is a forest (gbtree; dart, gbtree with tree weights); else UNSUPPORTED. */
export function treeBooster(name: string, file: string): 'gbtree' | 'dart' {
  if (name !== 'gbtree' && name !== 'dart') throw unsupportedModel(file, `booster '${name}' (only tree boosters, gbtree and dart, are forests)`);
  return name;
}

export function xgboostForest(model: XgboostModel, file: string): Forest {
  const objective = OBJECTIVES[model.objective];
  if (!objective) throw unsupportedModel(file, `objective '${model.objective}' has an output transform this backend does not apply`);
  const { numFeatures, numGroups, trees, treeGroups } = model;
  if (trees.length === 0) throw corruptModel(file, 'it has no trees');
  if (!(numFeatures >= 1)) throw corruptModel(file, `num_feature is ${numFeatures}`);
  if (treeGroups.length !== trees.length) throw corruptModel(file, `tree_info has ${treeGroups.length} entries for ${trees.length} trees`);
  if (model.weights && model.weights.length !== trees.length) throw corruptModel(file, `weight_drop has ${model.weights.length} entries for ${trees.length} trees`);
  const baseMargin = objective.margin(model.baseScore);
  if (!Number.isFinite(baseMargin)) throw corruptModel(file, `base_score ${model.baseScore} is outside the range of objective '${model.objective}'`);
  const builder = new ForestBuilder();
  trees.forEach((tree, t) => {
    const group = treeGroups[t]!;
    if (!Number.isInteger(group) || group < 0 || group >= numGroups) throw corruptModel(file, `tree ${t} adds to output ${group}, outside 0..${numGroups - 1}`);
    addTree(builder, tree, `tree ${t}`, group, model.weights ? model.weights[t]! : 1, numFeatures, file);
  });
  return builder.build({
    numFeatures,
    numGroups,
    categoryBounds: new Int32Array(1),
    categoryBits: new Uint32Array(0),
    baseScore: baseMargin,
    average: false,
    transform: objective.transform,
    sigmoidAlpha: 1,
    predictsClass: model.objective === 'multi:softmax',
  }, file);
}

function addTree(builder: ForestBuilder, tree: XgboostTree, name: string, group: number, weight: number, numFeatures: number, file: string): void {
  const n = tree.left.length;
  if (n === 0) throw corruptModel(file, `${name} has no nodes`);
  for (const key of ['right', 'feature', 'condition', 'defaultLeft'] as const) {
    if (tree[key].length !== n) throw corruptModel(file, `${name} has ${tree[key].length} ${key} entries for ${n} nodes`);
  }
  const base = builder.addTree(n, group);
  const child = (index: number) => {
    if (!Number.isInteger(index) || index <= 0 || index >= n) throw corruptModel(file, `${name} has a child index ${index} out of range`);
    return base + index;
  };
  for (let i = 0; i < n; i++) {
    if (tree.left[i] === -1) {
      builder.value[base + i] = tree.condition[i]! * weight;
      continue;
    }
    const feature = tree.feature[i]!;
    const defaultLeft = tree.defaultLeft[i];
    if (defaultLeft !== 0 && defaultLeft !== 1) throw corruptModel(file, `${name} has default_left ${defaultLeft}, not 0 or 1`);
    if (!Number.isInteger(feature) || feature < 0 || feature >= numFeatures) throw corruptModel(file, `${name} splits on feature ${feature}, outside 0..${numFeatures - 1}`);
    builder.feature[base + i] = feature;
    builder.threshold[base + i] = belowFloat32(tree.condition[i]!);
    builder.flags[base + i] = NAN_IS_MISSING | (defaultLeft ? DEFAULT_LEFT : 0);
    builder.left[base + i] = child(tree.left[i]!);
    builder.right[base + i] = child(tree.right[i]!);
  }
}

/**
 * XGBoost goes left when x < t, the forest when x <= threshold. Inputs and t are
 * float32, so x < t exactly when x <= the largest float32 below t.
 */
function belowFloat32(t: number): number {
  const f = new Float32Array([t]);
  const bits = new Int32Array(f.buffer);
  if (f[0] === 0) return -(2 ** -149);
  if (!Number.isFinite(f[0]!)) return f[0]!;
  bits[0]! += f[0]! > 0 ? -1 : 1;
  return f[0]!;
}
