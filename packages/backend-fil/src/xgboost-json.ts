import type { Forest } from './forest.js';
import { corruptModel, parseNumber, unsupportedModel } from './model-error.js';
import { decodeUbjson } from './ubjson.js';
import { treeBooster, xgboostForest } from './xgboost-forest.js';
import type { XgboostTree } from './xgboost-forest.js';

/*
 * XGBoost's JSON model (Booster.save_model('xgboost.json'), XGBoost >= 1.0), and the
 * same document in UBJSON (save_model('xgboost.ubj'), XGBoost's default since 2.1).
 */

type Json = Record<string, unknown>;

/** The fields read or known to be harmless; others fail the load unless xgboost_allow_unknown_field. */
const KNOWN_FIELDS: Readonly<Record<string, readonly string[]>> = {
  learner: ['attributes', 'feature_names', 'feature_types', 'gradient_booster', 'learner_model_param', 'objective'],
  tree: ['id', 'tree_param', 'left_children', 'right_children', 'parents', 'split_indices', 'split_conditions', 'split_type', 'default_left', 'base_weights', 'loss_changes', 'sum_hessian', 'categories', 'categories_nodes', 'categories_segments', 'categories_sizes'],
};

export function readXgboostJson(text: string, file: string, allowUnknownField: boolean): Forest {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch (error) {
    throw corruptModel(file, `it is not JSON (${(error as Error).message}); a binary file needs model_type xgboost or xgboost_ubj`);
  }
  return readXgboostDocument(root, file, allowUnknownField);
}

export function readXgboostUbj(bytes: Uint8Array, file: string, allowUnknownField: boolean): Forest {
  return readXgboostDocument(decodeUbjson(bytes, file), file, allowUnknownField);
}

function readXgboostDocument(root: unknown, file: string, allowUnknownField: boolean): Forest {
  const at = (value: unknown, path: string): Json => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw corruptModel(file, `${path} is missing or not an object`);
    return value as Json;
  };
  const learner = at(at(root, 'the document').learner, 'learner');
  checkFields(learner, 'learner', file, allowUnknownField);
  const booster = at(learner.gradient_booster, 'learner.gradient_booster');
  const boosterName = treeBooster(String(booster.name), file);
  const model = at(boosterName === 'dart' ? at(booster.gbtree, 'gradient_booster.gbtree').model : booster.model, 'the booster model');
  const params = at(learner.learner_model_param, 'learner.learner_model_param');
  const trees = model.trees;
  if (!Array.isArray(trees)) throw corruptModel(file, 'the booster model has no trees array');
  const declaredTrees = (model.gbtree_model_param as Json | undefined)?.num_trees;
  if (declaredTrees !== undefined && Number(declaredTrees) !== trees.length) throw corruptModel(file, `gbtree_model_param.num_trees is ${String(declaredTrees)}, but it has ${trees.length} trees`);
  const count = (key: string, fallback: number) => parseNumber(String(params[key] ?? fallback), file, key);
  return xgboostForest({
    numFeatures: count('num_feature', 0),
    numGroups: Math.max(1, count('num_class', 0), count('num_target', 1)),
    objective: String(at(learner.objective, 'learner.objective').name),
    baseScore: baseScore(params.base_score, file),
    trees: trees.map((tree, t) => readTree(at(tree, `tree ${t}`), `tree ${t}`, file, allowUnknownField)),
    treeGroups: numberArray(model.tree_info, 'tree_info', file),
    weights: boosterName === 'dart' ? numberArray(booster.weight_drop, 'weight_drop', file) : undefined,
  }, file);
}

function readTree(tree: Json, name: string, file: string, allowUnknownField: boolean): XgboostTree {
  checkFields(tree, 'tree', file, allowUnknownField);
  const array = (key: string) => numberArray(tree[key], `${name} ${key}`, file);
  if (tree.split_type !== undefined && array('split_type').some((type) => type !== 0)) {
    throw unsupportedModel(file, `${name} has categorical splits, which this backend does not read from XGBoost JSON yet`);
  }
  const sizeLeaf = (tree.tree_param as Json | undefined)?.size_leaf_vector;
  if (sizeLeaf !== undefined && Number(sizeLeaf) > 1) throw unsupportedModel(file, `${name} has vector leaves (multi_strategy multi_output_tree)`);
  return {
    left: array('left_children'),
    right: array('right_children'),
    feature: array('split_indices'),
    condition: array('split_conditions'),
    defaultLeft: array('default_left'),
  };
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
