import { DEFAULT_LEFT, ForestBuilder, NAN_IS_MISSING } from './forest.js';
import type { Forest, OutputTransform } from './forest.js';
import { corruptModel, parseNumber, unsupportedModel } from './model-error.js';

/*
 * XGBoost's JSON model (Booster.save_model('xgboost.json'), XGBoost >= 1.0). Trees are
 * parallel arrays: a node is a leaf when left_children is -1, its value in
 * split_conditions; otherwise a row goes left when its value < split_condition, and a
 * NaN goes the default_left way. base_score is in the objective's output space.
 */

type Json = Record<string, unknown>;

/** The fields read or known to be harmless; others fail the load unless xgboost_allow_unknown_field. */
const KNOWN_FIELDS: Readonly<Record<string, readonly string[]>> = {
  learner: ['attributes', 'feature_names', 'feature_types', 'gradient_booster', 'learner_model_param', 'objective'],
  tree: ['id', 'tree_param', 'left_children', 'right_children', 'parents', 'split_indices', 'split_conditions', 'split_type', 'default_left', 'base_weights', 'loss_changes', 'sum_hessian', 'categories', 'categories_nodes', 'categories_segments', 'categories_sizes'],
};

/** Per objective: the output transform and how base_score becomes a margin (XGBoost's ProbToMargin). */
const OBJECTIVES: Readonly<Record<string, { transform: OutputTransform; margin: (p: number) => number }>> = {
  'reg:squarederror': { transform: 'identity', margin: (p) => p },
  'reg:linear': { transform: 'identity', margin: (p) => p },
  'reg:squaredlogerror': { transform: 'identity', margin: (p) => p },
  'reg:pseudohubererror': { transform: 'identity', margin: (p) => p },
  'reg:absoluteerror': { transform: 'identity', margin: (p) => p },
  'reg:quantileerror': { transform: 'identity', margin: (p) => p },
  'binary:logitraw': { transform: 'identity', margin: (p) => p },
  'rank:pairwise': { transform: 'identity', margin: (p) => p },
  'rank:ndcg': { transform: 'identity', margin: (p) => p },
  'rank:map': { transform: 'identity', margin: (p) => p },
  'binary:logistic': { transform: 'sigmoid', margin: (p) => -Math.log(1 / p - 1) },
  'reg:logistic': { transform: 'sigmoid', margin: (p) => -Math.log(1 / p - 1) },
  'multi:softprob': { transform: 'softmax', margin: (p) => p },
  'multi:softmax': { transform: 'softmax', margin: (p) => p },
  'count:poisson': { transform: 'exp', margin: Math.log },
  'reg:gamma': { transform: 'exp', margin: Math.log },
  'reg:tweedie': { transform: 'exp', margin: Math.log },
  'survival:cox': { transform: 'exp', margin: Math.log },
};

export function readXgboostJson(text: string, file: string, allowUnknownField: boolean): Forest {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch (error) {
    throw corruptModel(file, `it is not JSON (${(error as Error).message}); a binary file needs model_type xgboost or xgboost_ubj`);
  }
  const at = (value: unknown, path: string): Json => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw corruptModel(file, `${path} is missing or not an object`);
    return value as Json;
  };
  const learner = at(at(root, 'the document').learner, 'learner');
  checkFields(learner, 'learner', file, allowUnknownField);
  const booster = at(learner.gradient_booster, 'learner.gradient_booster');
  const boosterName = String(booster.name);
  if (boosterName !== 'gbtree' && boosterName !== 'dart') throw unsupportedModel(file, `booster '${boosterName}' (only tree boosters, gbtree and dart, are forests)`);
  const model = at(boosterName === 'dart' ? at(booster.gbtree, 'gradient_booster.gbtree').model : booster.model, 'the booster model');
  const weights = boosterName === 'dart' ? numberArray(booster.weight_drop, 'weight_drop', file) : undefined;
  const params = at(learner.learner_model_param, 'learner.learner_model_param');
  const objectiveName = String(at(learner.objective, 'learner.objective').name);
  const objective = OBJECTIVES[objectiveName];
  if (!objective) throw unsupportedModel(file, `objective '${objectiveName}' has an output transform this backend does not apply`);

  const trees = model.trees;
  if (!Array.isArray(trees) || trees.length === 0) throw corruptModel(file, 'it has no trees');
  const groups = numberArray(model.tree_info, 'tree_info', file);
  if (groups.length !== trees.length) throw corruptModel(file, `tree_info has ${groups.length} entries for ${trees.length} trees`);
  const numFeatures = parseNumber(String(params.num_feature), file, 'num_feature');
  const numGroups = Math.max(1, parseNumber(String(params.num_class ?? 0), file, 'num_class'), parseNumber(String(params.num_target ?? 1), file, 'num_target'));
  if (!(numFeatures >= 1) || groups.some((g) => !Number.isInteger(g) || g < 0 || g >= numGroups)) throw corruptModel(file, 'num_feature or tree_info is out of range');

  const builder = new ForestBuilder();
  trees.forEach((tree, t) => readTree(at(tree, `tree ${t}`), t, groups[t]!, weights?.[t] ?? 1, numFeatures, builder, file, allowUnknownField));
  return builder.build({
    numFeatures,
    numGroups,
    categoryBounds: new Int32Array(1),
    categoryBits: new Uint32Array(0),
    baseScore: objective.margin(baseScore(params.base_score, file)),
    average: false,
    transform: objective.transform,
    sigmoidAlpha: 1,
  });
}

function readTree(tree: Json, t: number, group: number, weight: number, numFeatures: number, builder: ForestBuilder, file: string, allowUnknownField: boolean): void {
  checkFields(tree, 'tree', file, allowUnknownField);
  const name = `tree ${t}`;
  const lefts = numberArray(tree.left_children, `${name} left_children`, file);
  const n = lefts.length;
  const sized = (key: string) => {
    const values = numberArray(tree[key], `${name} ${key}`, file);
    if (values.length !== n) throw corruptModel(file, `${name} ${key} has ${values.length} entries for ${n} nodes`);
    return values;
  };
  const rights = sized('right_children');
  const features = sized('split_indices');
  const conditions = sized('split_conditions');
  const defaults = sized('default_left');
  const types = tree.split_type === undefined ? [] : sized('split_type');
  if (types.some((type) => type !== 0)) throw unsupportedModel(file, `${name} has categorical splits, which this backend does not read from XGBoost JSON yet`);
  const sizeLeaf = (tree.tree_param as Json | undefined)?.size_leaf_vector;
  if (sizeLeaf !== undefined && Number(sizeLeaf) > 1) throw unsupportedModel(file, `${name} has vector leaves (multi_strategy multi_output_tree)`);
  const base = builder.addTree(n, group);
  const child = (index: number) => {
    if (!Number.isInteger(index) || index <= 0 || index >= n) throw corruptModel(file, `${name} has a child index ${index} out of range`);
    return base + index;
  };
  for (let i = 0; i < n; i++) {
    if (lefts[i] === -1) {
      builder.value[base + i] = conditions[i]! * weight;
      continue;
    }
    const feature = features[i]!;
    if (!Number.isInteger(feature) || feature < 0 || feature >= numFeatures) throw corruptModel(file, `${name} splits on feature ${feature}, outside 0..${numFeatures - 1}`);
    builder.feature[base + i] = feature;
    builder.threshold[base + i] = belowFloat32(conditions[i]!);
    builder.flags[base + i] = NAN_IS_MISSING | (defaults[i] ? DEFAULT_LEFT : 0);
    builder.left[base + i] = child(lefts[i]!);
    builder.right[base + i] = child(rights[i]!);
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

/** base_score: a number in a string ("5E-1"), or a vector ("[5E-1]") in XGBoost 3, one value for every output. */
function baseScore(value: unknown, file: string): number {
  const text = String(value ?? '0.5').trim().replace(/^\[|\]$/g, '');
  const scores = text.split(',').map((s) => parseNumber(s, file, 'base_score'));
  if (scores.some((s) => s !== scores[0])) throw unsupportedModel(file, 'a base_score that differs between outputs');
  return scores[0]!;
}

function numberArray(value: unknown, what: string, file: string): number[] {
  if (!Array.isArray(value)) throw corruptModel(file, `${what} is missing or not an array`);
  return value.map((v) => {
    if (typeof v === 'boolean') return v ? 1 : 0;
    if (typeof v !== 'number') throw corruptModel(file, `${what} holds '${String(v)}', not a number`);
    return v;
  });
}

function checkFields(object: Json, kind: string, file: string, allowUnknownField: boolean): void {
  if (allowUnknownField) return;
  const unknown = Object.keys(object).filter((key) => !KNOWN_FIELDS[kind]!.includes(key));
  if (unknown.length) throw corruptModel(file, `${kind} has unknown field(s) ${unknown.join(', ')}; set parameter xgboost_allow_unknown_field to "true" to ignore them`);
}
