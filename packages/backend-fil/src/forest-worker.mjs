// A FIL worker thread: sums its share of a batch's rows over the forest it was started
// with. The forest, the rows and the sums live in shared memory (see forest-threads.ts).
import { parentPort, workerData } from 'node:worker_threads';
import { sumTrees } from './forest-walk.mjs';

const { forest } = workerData;
parentPort.on('message', ({ id, x, rows, out }) => {
  try {
    sumTrees(forest, x, rows, out);
    parentPort.postMessage({ id });
  } catch (error) {
    parentPort.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
