import { describe, expect, it } from 'vitest';
import { systemClock } from '@tritium/batcher';
import { WakeTimer } from '../../src/scheduling/wake-timer.js';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('WakeTimer', () => {
  it('wakes for a time already past on the next turn, never inside set()', async () => {
    let wakes = 0;
    const timer = new WakeTimer(() => wakes++);
    timer.set(systemClock.now() - 1_000_000);
    expect(wakes).toBe(0);
    await nextTurn();
    expect(wakes).toBe(1);
  });

  it('wakes once, not before the time, and not at all once cleared', async () => {
    const wokeAt: number[] = [];
    const timer = new WakeTimer(() => wokeAt.push(systemClock.now()));
    const at = systemClock.now() + 5000;
    timer.set(at);
    await sleep(20);
    expect(wokeAt.length).toBe(1);
    expect(wokeAt[0]).toBeGreaterThanOrEqual(at);
    timer.set(systemClock.now() + 1000);
    timer.set(undefined);
    await sleep(5);
    expect(wokeAt.length).toBe(1);
  });
});
