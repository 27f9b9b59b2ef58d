// The hot loop of FIL's tree evaluation, in plain JavaScript so that the worker threads
// (forest-worker.mjs) run the same code as the event loop without a TypeScript loader.
// The forest's layout is described in forest.ts; the types are in forest-walk.d.mts.

/** A NaN goes down the node's default side (else it is compared as 0). */
export const NAN_IS_MISSING = 1;
/** The default side is left. */
export const DEFAULT_LEFT = 2;
/** A zero (|x| <= 1e-35, and a NaN read as 0) goes down the default side (LightGBM's zero_as_missing). */
export const ZERO_IS_MISSING = 4;
/** The node tests membership of a category set: member goes left, others (and NaN, values below 0 as integers) right. */
export const CATEGORICAL = 8;
export const FLAG_BITS = 4;

/** LightGBM's kZeroThreshold. */
const ZERO_THRESHOLD = 1e-35;

/** Rows evaluated together tree by tree, so a tree's nodes stay in cache across them. */
const ROW_BLOCK = 64;

/** Adds each tree's leaf value for `rows` rows of `x` (row-major) into `out` (numGroups per row), untransformed. */
export function sumTrees(forest, x, rows, out) {
  const { numGroups, numFeatures, roots, treeGroup, nodes, threshold } = forest;
  const trees = roots.length;
  for (let start = 0; start < rows; start += ROW_BLOCK) {
    const end = Math.min(rows, start + ROW_BLOCK);
    for (let t = 0; t < trees; t++) {
      const root = roots[t];
      const group = treeGroup[t];
      for (let r = start; r < end; r++) out[r * numGroups + group] += leafValue(nodes, threshold, forest, root, x, r * numFeatures);
    }
  }
}

/** The value of the leaf a row (features at `x[offset ..]`) reaches in the tree rooted at `node`. */
function leafValue(nodes, threshold, forest, node, x, offset) {
  let packed = nodes[2 * node];
  while (packed >= 0) {
    const v = x[offset + (packed >>> FLAG_BITS)];
    const t = threshold[node];
    const left = nodes[2 * node + 1];
    // The common case first: a plain split on a number; NaN fails both comparisons.
    if (packed & (CATEGORICAL | ZERO_IS_MISSING)) node = goesLeft(forest, packed, v, t) ? left : left + 1;
    else if (v <= t) node = left;
    else if (v > t) node = left + 1;
    else if (packed & NAN_IS_MISSING) node = packed & DEFAULT_LEFT ? left : left + 1;
    else node = 0 <= t ? left : left + 1;
    packed = nodes[2 * node];
  }
  return threshold[node];
}

/** Categorical and zero-as-missing splits, as LightGBM decides them. */
function goesLeft(forest, packed, v, t) {
  if (packed & CATEGORICAL) return inCategorySet(forest, t, v);
  const x = v !== v ? 0 : v;
  if (Math.abs(x) <= ZERO_THRESHOLD) return (packed & DEFAULT_LEFT) !== 0;
  return x <= t;
}

function inCategorySet(forest, k, v) {
  // LightGBM truncates the value to an int first: -0.5 is category 0.
  const category = Math.trunc(v);
  if (!(category >= 0)) return false;
  const word = forest.categoryBounds[k] + (category >>> 5);
  if (category >= 2 ** 31 || word >= forest.categoryBounds[k + 1]) return false;
  return ((forest.categoryBits[word] >>> (category & 31)) & 1) === 1;
}
