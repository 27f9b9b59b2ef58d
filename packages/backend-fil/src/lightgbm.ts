import { CATEGORICAL, DEFAULT_LEFT, ForestBuilder, NAN_IS_MISSING, ZERO_IS_MISSING } from './forest.js';
import type { Forest, OutputTransform } from './forest.js';
import { corruptModel, parseNumber, unsupportedModel } from './model-error.js';

/*
 * LightGBM's text model (model.txt, Booster.save_model): a header of key=value lines,
 * then one `Tree=<n>` block per tree, then `end of trees`. In a tree, internal nodes
 * are 0..num_leaves-2 and a child index < 0 is the leaf ~index. decision_type bits:
 * 1 categorical, 2 default left, bits 2-3 the missing type (0 none, 1 zero, 2 NaN).
 */

type Block = Map<string, string>;

export function readLightGbm(text: string, file: string): Forest {
  const [header, ...trees] = blocks(text, file);
  if (!header?.has('tree')) throw corruptModel(file, 'it does not start with a LightGBM "tree" header');
  const numClass = integer(header, 'num_class', file);
  const perIteration = integer(header, 'num_tree_per_iteration', file);
  const numFeatures = integer(header, 'max_feature_idx', file) + 1;
  if (numClass < 1 || perIteration < 1 || numFeatures < 1) throw corruptModel(file, 'num_class, num_tree_per_iteration and max_feature_idx must be positive');
  if (trees.length === 0) throw corruptModel(file, 'it has no trees');
  // tree_sizes (LightGBM >= 2.3) lists every tree: a lost or merged Tree= line shows here.
  const sizes = header.get('tree_sizes')?.trim().split(/\s+/);
  if (sizes && sizes.length !== trees.length) throw corruptModel(file, `it has ${trees.length} trees, but tree_sizes lists ${sizes.length}`);
  if (trees.length % perIteration !== 0) throw corruptModel(file, `it has ${trees.length} trees, not a multiple of num_tree_per_iteration ${perIteration}`);
  const { transform, sigmoidAlpha } = objectiveTransform(header.get('objective') ?? '', file);

  const builder = new ForestBuilder();
  const bounds: number[] = [0];
  const bits: number[] = [];
  trees.forEach((tree, t) => readTree(tree, t, perIteration, builder, bounds, bits, numFeatures, file));
  return builder.build({
    numFeatures,
    numGroups: perIteration,
    categoryBounds: Int32Array.from(bounds),
    categoryBits: Uint32Array.from(bits),
    baseScore: 0,
    average: header.has('average_output'),
    transform,
    sigmoidAlpha,
    predictsClass: false,
  }, file);
}

function readTree(tree: Block, index: number, perIteration: number, builder: ForestBuilder, bounds: number[], bits: number[], numFeatures: number, file: string): void {
  const name = blockName(tree);
  if (tree.get('Tree') !== String(index)) throw corruptModel(file, `the tree after tree ${index - 1} is numbered '${tree.get('Tree')}'`);
  const group = index % perIteration;
  if (tree.get('is_linear') === '1') throw unsupportedModel(file, `${name} is a linear tree (linear_tree=true), which FIL does not evaluate`);
  const numLeaves = integer(tree, 'num_leaves', file);
  if (numLeaves < 1) throw corruptModel(file, `${name} has num_leaves ${numLeaves}`);
  const leafValues = numbers(tree, 'leaf_value', file, numLeaves);
  const inner = numLeaves - 1;
  const base = builder.addTree(numLeaves + inner, group);
  // Leaves follow the internal nodes; a one-leaf tree is its leaf alone.
  leafValues.forEach((v, i) => (builder.value[base + inner + i] = v));
  if (inner === 0) return;
  const features = numbers(tree, 'split_feature', file, inner);
  const thresholds = numbers(tree, 'threshold', file, inner);
  const decisions = numbers(tree, 'decision_type', file, inner);
  const lefts = numbers(tree, 'left_child', file, inner);
  const rights = numbers(tree, 'right_child', file, inner);
  const categoryBase = bounds.length - 1;
  const numCat = integer(tree, 'num_cat', file);
  if (numCat > 0) {
    const treeBounds = numbers(tree, 'cat_boundaries', file, numCat + 1);
    const treeBits = numbers(tree, 'cat_threshold', file, treeBounds[numCat]!);
    const bitBase = bits.length;
    // One by one: a spread of a very large cat_threshold would pass the engine's argument limit.
    for (const word of treeBits) bits.push(word);
    for (let k = 1; k <= numCat; k++) bounds.push(bitBase + treeBounds[k]!);
  }
  const node = (child: number) => {
    const index = child < 0 ? inner + ~child : child;
    if (!Number.isInteger(child) || index >= inner + numLeaves) throw corruptModel(file, `${name} has a child index ${child} out of range`);
    return base + index;
  };
  for (let i = 0; i < inner; i++) {
    const feature = features[i]!;
    if (!Number.isInteger(feature) || feature < 0 || feature >= numFeatures) throw corruptModel(file, `${name} splits on feature ${feature}, outside 0..${numFeatures - 1}`);
    const decision = decisions[i]!;
    const missing = (decision >> 2) & 3;
    if (!Number.isInteger(decision) || decision < 0 || decision > 15 || missing === 3) throw corruptModel(file, `${name} has decision_type ${decision}, not a LightGBM one`);
    let flags = decision & 2 ? DEFAULT_LEFT : 0;
    let threshold = thresholds[i]!;
    if (decision & 1) {
      flags |= CATEGORICAL;
      threshold += categoryBase;
      if (!Number.isInteger(threshold) || threshold >= bounds.length - 1) throw corruptModel(file, `${name} names a category set ${thresholds[i]} it does not have`);
    } else if (missing === 1) flags |= ZERO_IS_MISSING;
    else if (missing === 2) flags |= NAN_IS_MISSING;
    builder.feature[base + i] = feature;
    builder.threshold[base + i] = threshold;
    builder.flags[base + i] = flags;
    builder.left[base + i] = node(lefts[i]!);
    builder.right[base + i] = node(rights[i]!);
  }
}

/** LightGBM's output transform per objective (its ConvertOutput). */
function objectiveTransform(objective: string, file: string): { transform: OutputTransform; sigmoidAlpha: number } {
  const [name = '', ...args] = objective.trim().split(/\s+/);
  const alphaArg = args.find((a) => a.startsWith('sigmoid:'));
  const sigmoidAlpha = alphaArg ? parseNumber(alphaArg.slice('sigmoid:'.length), file, 'sigmoid') : 1;
  switch (name) {
    case 'binary':
    case 'multiclassova':
    case 'cross_entropy':
      return { transform: 'sigmoid', sigmoidAlpha };
    case 'cross_entropy_lambda':
      return { transform: 'softplus', sigmoidAlpha };
    case 'multiclass':
      return { transform: 'softmax', sigmoidAlpha };
    case 'poisson':
    case 'gamma':
    case 'tweedie':
      return { transform: 'exp', sigmoidAlpha };
    case 'regression':
      return { transform: args.includes('sqrt') ? 'square' : 'identity', sigmoidAlpha };
    case '':
    case 'custom':
    case 'regression_l1':
    case 'huber':
    case 'fair':
    case 'quantile':
    case 'mape':
    case 'lambdarank':
    case 'rank_xendcg':
      return { transform: 'identity', sigmoidAlpha };
    default:
      throw unsupportedModel(file, `objective '${objective}' has an output transform this backend does not apply`);
  }
}

/** Splits the text into the header block and one block per tree, each a key=value map. */
function blocks(text: string, file: string): Block[] {
  const end = text.indexOf('end of trees');
  if (end < 0) throw corruptModel(file, 'it has no "end of trees" line (not a LightGBM text model, or truncated)');
  const result: Block[] = [new Map()];
  for (const raw of text.slice(0, end).split('\n')) {
    const line = raw.trim();
    if (line === '') continue;
    const eq = line.indexOf('=');
    const key = eq < 0 ? line : line.slice(0, eq);
    if (key === 'Tree') result.push(new Map());
    const block = result[result.length - 1]!;
    // A key twice in a block means a damaged Tree= line merged two trees.
    if (block.has(key)) throw corruptModel(file, `${blockName(block)} has '${key}' twice`);
    block.set(key, eq < 0 ? '' : line.slice(eq + 1));
  }
  return result;
}

function integer(block: Block, key: string, file: string): number {
  const value = parseNumber(required(block, key, file), file, key);
  if (!Number.isInteger(value)) throw corruptModel(file, `${key} '${block.get(key)}' is not an integer`);
  return value;
}

function numbers(block: Block, key: string, file: string, count: number): number[] {
  const tokens = required(block, key, file).trim().split(/\s+/).filter((t) => t !== '');
  if (tokens.length !== count) throw corruptModel(file, `${key} has ${tokens.length} values, expected ${count}`);
  return tokens.map((t) => parseNumber(t, file, key));
}

function required(block: Block, key: string, file: string): string {
  const value = block.get(key);
  if (value === undefined) throw corruptModel(file, `${blockName(block)} has no ${key}`);
  return value;
}

/** How errors name a block: `tree <n>`, or the header. */
function blockName(block: Block): string {
  return block.has('Tree') ? `tree ${block.get('Tree')}` : 'the header';
}
