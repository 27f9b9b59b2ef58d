import { describe, expect, test } from 'vitest';
import { countingTurns } from '../../core/test/helpers/loop-turns.js';
import { LOOP_SLICE_MILLISECONDS, turnIfDue } from '../src/loop-turn.js';

/** Holds the thread for `ms`, as a synchronous inline run does. */
function busyFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** `callers` callers, each doing `runs` synchronous runs of `ms` after turnIfDue(); returns the loop turn each run happened in. */
function runsIn(turns: () => number, callers: number, runs: number, ms: number): Promise<number[]> {
  const seen: number[] = [];
  const caller = async () => {
    for (let i = 0; i < runs; i++) {
      const turn = turnIfDue();
      if (turn) await turn;
      seen.push(turns());
      busyFor(ms);
    }
  };
  return Promise.all(Array.from({ length: callers }, caller)).then(() => seen);
}

describe('turnIfDue: synchronous runs let the event loop turn', () => {
  test('runs longer than a slice each get a turn of their own, even when many callers waited for the same turn', async () => {
    const { result: seen } = await countingTurns((turns) => runsIn(turns, 8, 3, LOOP_SLICE_MILLISECONDS * 1.5));
    expect(seen).toHaveLength(24);
    // A turn holds at most the run that began its slice: 24 runs, 24 distinct turns.
    expect(new Set(seen).size).toBe(24);
  });

  test('short runs share a turn rather than each paying for one', async () => {
    const { result: seen } = await countingTurns((turns) => runsIn(turns, 8, 5, 0.01));
    expect(seen).toHaveLength(40);
    expect(new Set(seen).size).toBeLessThan(20);
  });

  test('a timer due during a stream of long runs fires after the run under way, not after them all', async () => {
    let firedAfterRuns = -1;
    let runsDone = 0;
    const timer = new Promise<void>((resolve) =>
      setTimeout(() => {
        firedAfterRuns = runsDone;
        resolve();
      }, 0),
    );
    const caller = async () => {
      for (let i = 0; i < 4; i++) {
        const turn = turnIfDue();
        if (turn) await turn;
        busyFor(LOOP_SLICE_MILLISECONDS * 1.5);
        runsDone++;
      }
    };
    await Promise.all([timer, ...Array.from({ length: 8 }, caller)]);
    expect(runsDone).toBe(32);
    // Before any run when the first callers already wait for a turn (a slice spent before the test); never after all 32.
    expect(firedAfterRuns).toBeGreaterThanOrEqual(0);
    expect(firedAfterRuns).toBeLessThanOrEqual(2);
  });
});
