import { setImmediate as nextTurn } from 'node:timers/promises';
import { finish } from './forest.js';
import type { Forest } from './forest.js';
import { sumTrees } from './forest-walk.mjs';

/** Tree walks evaluated between returns to the event loop (about 1–2 ms), so a large batch does not hold it. */
const WALKS_PER_SLICE = 50_000;

/** predict(), in slices of rows with a turn of the event loop between them (other requests' I/O and timers run). */
export async function predictYielding(forest: Forest, x: Float32Array, rows: number): Promise<Float64Array> {
  const sliceRows = Math.max(1, Math.floor(WALKS_PER_SLICE / forest.roots.length));
  const { numFeatures, numGroups } = forest;
  const out = new Float64Array(rows * numGroups);
  for (let start = 0; start < rows; start += sliceRows) {
    if (start > 0) await nextTurn();
    const end = Math.min(rows, start + sliceRows);
    sumTrees(forest, x.subarray(start * numFeatures, end * numFeatures), end - start, out.subarray(start * numGroups, end * numGroups));
  }
  finish(forest, out, rows);
  return out;
}
