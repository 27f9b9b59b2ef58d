import { expect, test } from 'vitest';
import { RunsUnderWay } from '../src/runs-under-way.js';

/** Whether `promise` has settled once pending callbacks have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

test('idle() waits for every run tracked, fulfilled or rejected', async () => {
  const runs = new RunsUnderWay();
  let finish!: () => void;
  let fail!: (error: Error) => void;
  const first = runs.track(new Promise<void>((resolve) => (finish = resolve)));
  const second = runs.track(new Promise<void>((_, reject) => (fail = reject)));
  const idle = runs.idle();
  expect(await settled(idle)).toBe(false);
  finish();
  await first;
  expect(await settled(idle)).toBe(false);
  fail(new Error('the run failed'));
  await expect(second).rejects.toThrow('the run failed');
  expect(await settled(idle)).toBe(true);
});

test('idle() resolves at once when no run is under way, and again after runs end', async () => {
  const runs = new RunsUnderWay();
  expect(await settled(runs.idle())).toBe(true);
  let finish!: () => void;
  runs.track(new Promise<void>((resolve) => (finish = resolve)));
  const waiting = runs.idle();
  expect(await settled(waiting)).toBe(false);
  finish();
  expect(await settled(waiting)).toBe(true);
  expect(await settled(runs.idle())).toBe(true);
});
