// A run's own time, shared by inline sessions (inline-session.ts) and pool threads
// (pool-thread.mjs, which runs unbuilt, so this stays plain JavaScript).
import { performance } from 'node:perf_hooks';

/**
 * Times a run as the model's own cost. onnxruntime-node starts a run from a setImmediate:
 * an immediate queued just before its own fires right before the run starts, so the
 * hop (and a woken thread's wait for it) is left out. When the run ends before that
 * immediate (onnxruntime-web), the whole call is its time.
 */
export async function timedRun(run) {
  const begin = performance.now();
  let start = begin;
  setImmediate(() => (start = performance.now()));
  const results = await run();
  const end = performance.now();
  return { results, micros: (end - (start <= end ? start : begin)) * 1000 };
}
