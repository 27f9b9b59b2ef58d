import type { Forest } from './forest.js';
import { corruptModel, unsupportedModel } from './model-error.js';
import { treeBooster, xgboostForest } from './xgboost-forest.js';
import type { XgboostTree } from './xgboost-forest.js';

/*
 * XGBoost's legacy binary model (xgboost.model: save_model with any name but .json or
 * .ubj before XGBoost 2.1, or save_raw()), little-endian, as XGBoost's learner.cc and
 * gbtree_model.cc write it:
 *   ["binf"] LearnerModelParamLegacy (136 bytes: f32 base_score, u32 num_feature,
 *   i32 num_class, ..., u32 num_target at 28), string objective, string booster;
 *   GBTreeModelParam (160 bytes: i32 num_trees at 0, i32 size_leaf_vector at 28);
 *   per tree: TreeParam (148 bytes: i32 num_nodes at 4, i32 size_leaf_vector at 20),
 *   num_nodes nodes of 20 bytes (i32 parent, i32 left, i32 right, u32 split index
 *   with default-left in its top bit, f32 split condition or leaf value), num_nodes
 *   stats of 16 bytes, and a leaf vector when size_leaf_vector > 0;
 *   then i32 tree_info per tree; a dart booster then has its weight_drop (u64 count, f32s).
 * Strings are a u64 length and the bytes. What follows (attributes, metrics) is not needed.
 */

const LEARNER_PARAM_BYTES = 136;
const GBTREE_PARAM_BYTES = 160;
const TREE_PARAM_BYTES = 148;
const NODE_BYTES = 20;
const NODE_STAT_BYTES = 16;

class Reader {
  private offset = 0;
  private readonly view: DataView;

  constructor(private readonly bytes: Uint8Array, private readonly file: string) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  /** Moves past `n` bytes, returning where they start. */
  take(n: number, what: string): number {
    if (!(n >= 0) || this.offset + n > this.bytes.length) throw corruptModel(this.file, `it ends inside ${what} (truncated, or not a legacy binary XGBoost model)`);
    const start = this.offset;
    this.offset += n;
    return start;
  }

  peekMagic(magic: string): boolean {
    return new TextDecoder().decode(this.bytes.subarray(this.offset, this.offset + magic.length)) === magic;
  }

  i32(at: number): number { return this.view.getInt32(at, true); }
  u32(at: number): number { return this.view.getUint32(at, true); }
  f32(at: number): number { return this.view.getFloat32(at, true); }

  u64(what: string): number {
    const value = this.view.getBigUint64(this.take(8, what), true);
    if (value > BigInt(this.bytes.length)) throw corruptModel(this.file, `${what} has length ${value}, more than the file holds`);
    return Number(value);
  }

  string(what: string): string {
    const length = this.u64(what);
    const start = this.take(length, what);
    return new TextDecoder().decode(this.bytes.subarray(start, start + length));
  }
}

export function readXgboostBinary(bytes: Uint8Array, file: string): Forest {
  const reader = new Reader(bytes, file);
  if (reader.peekMagic('binf')) reader.take(4, 'the "binf" header');
  else if (reader.peekMagic('{')) throw corruptModel(file, 'it looks like JSON or UBJSON: set model_type to xgboost_json or xgboost_ubj');
  const learner = reader.take(LEARNER_PARAM_BYTES, 'the learner parameters');
  const objective = reader.string('the objective name');
  const booster = treeBooster(reader.string('the booster name'), file);
  const gbtree = reader.take(GBTREE_PARAM_BYTES, 'the tree booster parameters');
  const numTrees = reader.i32(gbtree);
  if (reader.i32(gbtree + 28) > 0) throw unsupportedModel(file, 'vector leaves (size_leaf_vector > 0)');
  if (numTrees < 0) throw corruptModel(file, `num_trees is ${numTrees}`);
  const trees = Array.from({ length: numTrees }, (_, t) => readTree(reader, `tree ${t}`));
  const infoStart = reader.take(4 * numTrees, 'tree_info');
  const treeGroups = Array.from({ length: numTrees }, (_, t) => reader.i32(infoStart + 4 * t));
  let weights: number[] | undefined;
  if (booster === 'dart') {
    const count = reader.u64('weight_drop');
    const start = reader.take(4 * count, 'weight_drop');
    weights = Array.from({ length: count }, (_, i) => reader.f32(start + 4 * i));
  }
  // num_target was a reserved (zero) field before XGBoost 2.0.
  const numTarget = reader.u32(learner + 28);
  return xgboostForest({
    numFeatures: reader.u32(learner + 4),
    numGroups: Math.max(1, reader.i32(learner + 8), numTarget),
    objective,
    baseScore: reader.f32(learner),
    trees,
    treeGroups,
    weights,
  }, file);
}

function readTree(reader: Reader, name: string): XgboostTree {
  const param = reader.take(TREE_PARAM_BYTES, `${name}'s parameters`);
  const n = reader.i32(param + 4);
  const sizeLeafVector = reader.i32(param + 20);
  const nodes = reader.take(n * NODE_BYTES, `${name}'s nodes`);
  reader.take(n * NODE_STAT_BYTES, `${name}'s node statistics`);
  if (sizeLeafVector > 0) {
    const count = reader.u64(`${name}'s leaf vector`);
    reader.take(4 * count, `${name}'s leaf vector`);
  }
  const tree = { left: new Int32Array(n), right: new Int32Array(n), feature: new Int32Array(n), condition: new Float32Array(n), defaultLeft: new Uint8Array(n) };
  for (let i = 0; i < n; i++) {
    const at = nodes + i * NODE_BYTES;
    const splitIndex = reader.u32(at + 12);
    tree.left[i] = reader.i32(at + 4);
    tree.right[i] = reader.i32(at + 8);
    tree.feature[i] = splitIndex & 0x7fffffff;
    tree.defaultLeft[i] = splitIndex >>> 31;
    tree.condition[i] = reader.f32(at + 16);
  }
  return tree;
}
