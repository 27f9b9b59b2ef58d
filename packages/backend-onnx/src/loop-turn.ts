import { performance } from 'node:perf_hooks';

/**
 * Longest that synchronous inline runs go on without the event loop turning: callers
 * that resubmit as soon as they are answered chain such runs in microtasks, which
 * would otherwise starve timers and I/O for as long as they keep coming.
 */
export const LOOP_SLICE_MILLISECONDS = 1;

/** When the immediate that marks the loop's next turn was queued; undefined when none is queued. */
let queuedAt: number | undefined;
const turned = () => (queuedAt = undefined);

/**
 * Whether the caller should let the event loop turn before running synchronously:
 * true once LOOP_SLICE_MILLISECONDS have passed since a run found the loop had turned.
 * One setImmediate per turn, not per run.
 */
function loopTurnOverdue(): boolean {
  const now = performance.now();
  if (queuedAt === undefined) {
    queuedAt = now;
    setImmediate(turned);
    return false;
  }
  return now - queuedAt > LOOP_SLICE_MILLISECONDS;
}

/**
 * Before a synchronous run: undefined while the loop's current slice lasts, else a
 * promise of the loop's next turn in which a slice is left. Runs that waited for the
 * same turn resume in one check phase, so each checks again: they share the new slice
 * rather than all running in it.
 */
export function turnIfDue(): Promise<void> | undefined {
  if (!loopTurnOverdue()) return undefined;
  return new Promise<void>((resolve) => setImmediate(resolve)).then(() => turnIfDue());
}
