// A worker thread of a FIL backend's forest pool (see forest-pool.ts): sums its share of
// a batch's rows over one of the forests it was sent. The forests, the rows and the sums
// live in shared memory. Messages:
//   { add, forest }: the forest `forest` is known by the id `add` from then on;
//   { drop }: the forest with that id is forgotten;
//   { id, forest, x, rows, out } -> { id } or { id, error }: a slice of batch `id`.
import { parentPort } from 'node:worker_threads';
import { sumTrees } from './forest-walk.mjs';

const forests = new Map();
parentPort.on('message', (message) => {
  if (message.add !== undefined) return void forests.set(message.add, message.forest);
  if (message.drop !== undefined) return void forests.delete(message.drop);
  const { id, forest, x, rows, out } = message;
  try {
    sumTrees(forests.get(forest), x, rows, out);
    parentPort.postMessage({ id });
  } catch (error) {
    parentPort.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
