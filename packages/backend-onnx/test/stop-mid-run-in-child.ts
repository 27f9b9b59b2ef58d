import { onnxBackend } from '../src/index.js';
import { EXECUTION_THREAD_PARAMETER } from '../src/thread-choice.js';
import { fp32, loadDirect, request, TempRepository } from './helpers.js';

/**
 * Frees a pooled MLP's instance and model while runs of a large batch are under way on
 * its pool thread, then lets the process end. Run as a child process (`node --import
 * tsx`, from the repository root): a thread stopped inside onnxruntime-node's native run
 * aborts the whole process, which only its exit status shows. Prints the runs' outcomes.
 */
const ROWS = 4096;
const repo = await TempRepository.create();
try {
  const loaded = await loadDirect(onnxBackend(), repo, 'mlp', 'mlp', { parameters: { [EXECUTION_THREAD_PARAMETER]: { string_value: 'worker' } } });
  const instance = loaded.instances[0]!;
  const input = { INPUT0: fp32(new Array<number>(ROWS * 256).fill(0.5), [ROWS, 256]) };
  const outcome = (results: unknown) => (Array.isArray(results) && results[0] instanceof Error ? results[0].message : 'ran');
  const runs = [0, 1, 2].map(() => Promise.resolve(instance.execute([request(input, [], { batchSize: ROWS })])).then(outcome, (error: Error) => error.message));
  // The first run is under way on the pool thread by now; the other two wait behind it.
  await new Promise((resolve) => setTimeout(resolve, 30));
  await instance.finalize?.();
  await loaded.model.finalize?.();
  console.log(JSON.stringify(await Promise.all(runs)));
} finally {
  await repo.cleanup();
}
