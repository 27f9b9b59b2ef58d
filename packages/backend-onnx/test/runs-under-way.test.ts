import { expect, test } from 'vitest';
import { RunsUnderWay } from '../src/runs-under-way.js';

test('RunsUnderWay counts a run until it settles, fulfilled or rejected', async () => {
  const runs = new RunsUnderWay();
  let finish!: () => void;
  let fail!: (error: Error) => void;
  const first = runs.track(new Promise<void>((resolve) => (finish = resolve)));
  const second = runs.track(new Promise<void>((_, reject) => (fail = reject)));
  expect(runs.none).toBe(false);
  finish();
  await first;
  expect(runs.none).toBe(false);
  fail(new Error('the run failed'));
  await expect(second).rejects.toThrow('the run failed');
  expect(runs.none).toBe(true);
});

test('idle() resolves once the last run under way has settled, at once when none is', async () => {
  const runs = new RunsUnderWay();
  await runs.idle();
  let finish!: () => void;
  runs.track(new Promise<void>((resolve) => (finish = resolve)));
  let idle = false;
  const waiting = runs.idle().then(() => (idle = true));
  await Promise.resolve();
  expect(idle).toBe(false);
  finish();
  await waiting;
  expect([idle, runs.none]).toEqual([true, true]);
});
