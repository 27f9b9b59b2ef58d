import { describe, expect, it } from 'vitest';
import { SequenceBatcher, type SequenceBatch, type SequenceBatcherOptions } from '../src/index.js';
import { FakeClock } from './fake-clock.js';

interface Step {
  readonly sequenceKey: string;
  readonly start: boolean;
  readonly end: boolean;
  readonly name: string;
}

const start = (key: string, name = `${key}:start`): Step => ({ sequenceKey: key, start: true, end: false, name });
const step = (key: string, name = `${key}:step`): Step => ({ sequenceKey: key, start: false, end: false, name });
const end = (key: string, name = `${key}:end`): Step => ({ sequenceKey: key, start: false, end: true, name });
const only = (key: string, name = `${key}:only`): Step => ({ sequenceKey: key, start: true, end: true, name });

const defaults: SequenceBatcherOptions = {
  strategy: 'direct',
  instances: 1,
  slotsPerInstance: 4,
  maxBatchSize: 4,
  preferredBatchSizes: [],
  maxQueueDelayMicroseconds: 0,
  minimumSlotUtilization: 0,
  maxSequenceIdleMicroseconds: 1_000_000,
};

function setup(options: Partial<SequenceBatcherOptions> = {}, clock = new FakeClock()) {
  const batcher = new SequenceBatcher<Step>({ ...defaults, ...options }, clock);
  const accept = (...items: Step[]) => {
    for (const item of items) expect(batcher.enqueue(item)).toMatchObject({ accepted: true });
  };
  return { clock, batcher, accept };
}

const names = (batch: SequenceBatch<Step> | undefined) => batch?.items.map((item) => item?.name ?? null);

/** Runs instance 0's batches one after another, each completing before the next, until none is left. */
function runAll(batcher: SequenceBatcher<Step>): (string | null)[][] {
  const seen: (string | null)[][] = [];
  for (let batch = batcher.nextBatch(0).batch; batch; batch = batcher.nextBatch(0).batch) {
    seen.push(names(batch)!);
    batcher.completed(batch);
  }
  return seen;
}

describe('slots', () => {
  it('spreads new sequences across instances, lowest free slot first', () => {
    const { batcher, accept } = setup({ instances: 2, slotsPerInstance: 2 });
    accept(start('a'), start('b'), start('c'));
    expect(names(batcher.nextBatch(0).batch)).toEqual(['a:start', 'c:start']);
    expect(names(batcher.nextBatch(1).batch)).toEqual(['b:start']);
  });

  it('backlogs a sequence when every slot is taken and seats it, with its queued items, when a sequence ends', () => {
    const { batcher, accept } = setup({ slotsPerInstance: 1 });
    accept(start('a'), start('b'), step('b'), end('b'));
    const first = batcher.nextBatch(0).batch!;
    expect(names(first)).toEqual(['a:start']);
    accept(end('a'));
    batcher.completed(first);
    const second = batcher.nextBatch(0).batch!;
    expect(names(second)).toEqual(['a:end']);
    batcher.completed(second);
    expect(runAll(batcher)).toEqual([['b:start'], ['b:step'], ['b:end']]);
    expect(batcher.liveSequences).toBe(0);
  });

  it('keeps backlogged sequences in arrival order', () => {
    const { batcher, accept } = setup({ slotsPerInstance: 1 });
    accept(only('a'), start('b'), start('c'));
    batcher.completed(batcher.nextBatch(0).batch!);
    expect(names(batcher.nextBatch(0).batch)).toEqual(['b:start']);
  });
});

describe('one item in flight per sequence', () => {
  it('sends the next item only after the previous batch completed', () => {
    const { batcher, accept } = setup();
    accept(start('a'), step('a'), end('a'));
    const first = batcher.nextBatch(0).batch!;
    expect(names(first)).toEqual(['a:start']);
    expect(batcher.nextBatch(0)).toEqual({ wakeAt: undefined });
    expect(batcher.size).toBe(2);
    batcher.completed(first);
    expect(names(batcher.nextBatch(0).batch)).toEqual(['a:step']);
  });

  it('holds to it with the oldest strategy too', () => {
    const { batcher, accept } = setup({ strategy: 'oldest' });
    accept(start('a'), step('a'), start('b'));
    const first = batcher.nextBatch(0).batch!;
    expect(names(first)).toEqual(['a:start', 'b:start']);
    expect(batcher.nextBatch(0)).toEqual({ wakeAt: undefined });
    batcher.completed(first);
    expect(names(batcher.nextBatch(0).batch)).toEqual(['a:step']);
  });

  it('refuses to complete an item that is not running', () => {
    const { batcher } = setup();
    expect(() => batcher.completed({ instance: 0, items: [start('a')] })).toThrow(/not running/);
  });
});

describe('sequence life', () => {
  it('refuses a non-START item of a sequence that never started', () => {
    const { batcher } = setup();
    expect(batcher.enqueue(step('a'))).toEqual({ accepted: false, reason: 'not-started' });
    expect(batcher.enqueue(end('a'))).toEqual({ accepted: false, reason: 'not-started' });
    expect(batcher.liveSequences).toBe(0);
  });

  it('refuses items after an END, even before it completed, and ends the sequence when it completes', () => {
    const { batcher, accept } = setup();
    accept(start('a'), end('a'));
    expect(batcher.enqueue(step('a'))).toEqual({ accepted: false, reason: 'not-started' });
    batcher.completed(batcher.nextBatch(0).batch!);
    const last = batcher.nextBatch(0).batch!;
    expect(batcher.liveSequences).toBe(1);
    batcher.completed(last);
    expect(batcher.liveSequences).toBe(0);
    expect(batcher.enqueue(step('a'))).toEqual({ accepted: false, reason: 'not-started' });
  });

  it('runs a START+END item as a one-step sequence', () => {
    const { batcher } = setup({ slotsPerInstance: 1 });
    expect(batcher.enqueue(only('a'))).toEqual({ accepted: true, restarted: false });
    expect(batcher.enqueue(start('b'))).toEqual({ accepted: true, restarted: false });
    const batch = batcher.nextBatch(0).batch!;
    expect(names(batch)).toEqual(['a:only']);
    batcher.completed(batch);
    expect(batcher.liveSequences).toBe(1);
    expect(names(batcher.nextBatch(0).batch)).toEqual(['b:start']);
  });

  it('restarts a live sequence in its slot, behind its queued items', () => {
    const { batcher, accept } = setup({ slotsPerInstance: 2 });
    accept(start('a'), step('a'));
    expect(batcher.enqueue(start('a', 'a:again'))).toEqual({ accepted: true, restarted: true });
    expect(batcher.liveSequences).toBe(1);
    expect(runAll(batcher)).toEqual([['a:start'], ['a:step'], ['a:again']]);
  });

  it('queues a START that follows an END behind it, in the same sequence, without calling it a restart', () => {
    const { batcher, accept } = setup({ slotsPerInstance: 1 });
    accept(start('a'), end('a'));
    expect(batcher.enqueue(start('a', 'a:next'))).toEqual({ accepted: true, restarted: false });
    accept(step('a', 'a:next-step'));
    expect(batcher.liveSequences).toBe(1);
    expect(runAll(batcher)).toEqual([['a:start'], ['a:end'], ['a:next'], ['a:next-step']]);
    expect(batcher.liveSequences).toBe(1);
  });

  it('sends such a follow-on sequence behind the backlog when its END frees the slot', () => {
    const { batcher, accept } = setup({ slotsPerInstance: 1 });
    accept(start('a'), end('a'), start('b'), start('a', 'a:next'));
    batcher.completed(batcher.nextBatch(0).batch!);
    batcher.completed(batcher.nextBatch(0).batch!);
    expect(names(batcher.nextBatch(0).batch)).toEqual(['b:start']);
  });
});

describe('direct batches', () => {
  it('fills slots without an item with null, up to the highest slot with one', () => {
    const { batcher, accept } = setup({ slotsPerInstance: 4 });
    accept(start('a'), start('b'), start('c'), start('d'));
    batcher.completed(batcher.nextBatch(0).batch!);
    accept(step('b'), step('c'));
    expect(names(batcher.nextBatch(0).batch)).toEqual([null, 'b:step', 'c:step']);
  });

  it('uses null for a slot whose sequence is still running', () => {
    const { batcher, accept } = setup({ instances: 1, slotsPerInstance: 2 });
    accept(start('a'));
    const first = batcher.nextBatch(0).batch!;
    accept(step('a'), start('b'));
    expect(names(batcher.nextBatch(0).batch)).toEqual([null, 'b:start']);
    batcher.completed(first);
  });

  it('waits for minimum slot utilization or the delay, only when both are set', () => {
    const { batcher, clock, accept } = setup({
      slotsPerInstance: 4,
      minimumSlotUtilization: 0.5,
      maxQueueDelayMicroseconds: 100,
    });
    accept(start('a'));
    expect(batcher.nextBatch(0)).toEqual({ wakeAt: 100 });
    clock.advance(40);
    accept(start('b'));
    // 2 of 4 slots ready reaches 0.5
    expect(names(batcher.nextBatch(0).batch)).toEqual(['a:start', 'b:start']);
  });

  it('sends when the oldest ready item has waited the delay, not before', () => {
    const { batcher, clock, accept } = setup({
      slotsPerInstance: 4,
      minimumSlotUtilization: 0.75,
      maxQueueDelayMicroseconds: 100,
    });
    accept(start('a'));
    clock.advance(30);
    accept(start('b'));
    clock.advance(69);
    expect(batcher.nextBatch(0)).toEqual({ wakeAt: 100 });
    clock.advance(1);
    expect(names(batcher.nextBatch(0).batch)).toEqual(['a:start', 'b:start']);
  });

  it('decides from one clock reading: when it says to wait, it names the time the batch comes', () => {
    // The clock moves 1 µs on every read, so for some delay it expires between two reads of one decision.
    for (let delay = 1; delay <= 10; delay++) {
      const { batcher, clock, accept } = setup({ minimumSlotUtilization: 1, maxQueueDelayMicroseconds: delay }, new FakeClock(0, 1));
      accept(start('a'));
      let next = batcher.nextBatch(0);
      if (!next.batch) {
        expect(next.wakeAt, `delay ${delay}`).toBeDefined();
        clock.advance(next.wakeAt! - clock.now());
        next = batcher.nextBatch(0);
      }
      expect(names(next.batch), `delay ${delay}`).toEqual(['a:start']);
    }
  });

  it("leaves nothing behind to wake for once an instance has decided to wait (it may leave service meanwhile)", () => {
    const { batcher, accept } = setup({ minimumSlotUtilization: 1, maxQueueDelayMicroseconds: 100 });
    accept(start('a'));
    expect(batcher.nextBatch(0)).toEqual({ wakeAt: 100 });
    expect(batcher.releaseAt()).toBeUndefined();
  });

  it('ignores the minimum utilization without a delay, and the delay without a minimum', () => {
    for (const rules of [
      { minimumSlotUtilization: 1, maxQueueDelayMicroseconds: 0 },
      { minimumSlotUtilization: 0, maxQueueDelayMicroseconds: 100 },
    ]) {
      const { batcher, accept } = setup({ slotsPerInstance: 4, ...rules });
      accept(start('a'));
      expect(names(batcher.nextBatch(0).batch)).toEqual(['a:start']);
    }
  });
});

describe('oldest batches', () => {
  const oldest = { strategy: 'oldest', slotsPerInstance: 4, maxBatchSize: 4 } as const;

  it('takes head items of the instance sequences oldest first, without nulls, up to maxBatchSize', () => {
    const { batcher, clock, accept } = setup({ ...oldest, maxBatchSize: 2 });
    accept(start('a'), start('b'), start('c'));
    const first = batcher.nextBatch(0).batch!;
    expect(names(first)).toEqual(['a:start', 'b:start']);
    clock.advance(10);
    accept(step('a'));
    clock.advance(10);
    batcher.completed(first);
    accept(step('b'));
    // c waits since 0, a's step since its enqueue (10), b's step since now (20)
    expect(names(batcher.nextBatch(0).batch)).toEqual(['c:start', 'a:step']);
  });

  it('orders by when an item became ready: after its enqueue and the previous completion', () => {
    const { batcher, clock, accept } = setup(oldest);
    accept(start('a'), step('a'));
    const first = batcher.nextBatch(0).batch!;
    clock.advance(10);
    accept(start('b'));
    clock.advance(10);
    batcher.completed(first);
    expect(names(batcher.nextBatch(0).batch)).toEqual(['b:start', 'a:step']);
  });

  it('sends the largest reachable preferred size at once and waits with fewer', () => {
    const { batcher, clock, accept } = setup({ ...oldest, preferredBatchSizes: [2, 3], maxQueueDelayMicroseconds: 100 });
    accept(start('a'));
    expect(batcher.nextBatch(0)).toEqual({ wakeAt: 100 });
    clock.advance(10);
    accept(start('b'));
    expect(names(batcher.nextBatch(0).batch)).toEqual(['a:start', 'b:start']);
  });

  it('sends all candidates once the delay passed, even past a preferred size', () => {
    const { batcher, clock, accept } = setup({ ...oldest, preferredBatchSizes: [2, 4], maxQueueDelayMicroseconds: 100 });
    accept(start('a'), start('b'), start('c'));
    // 2 is reachable: sent at once
    expect(names(batcher.nextBatch(0).batch)).toEqual(['a:start', 'b:start']);
    expect(batcher.nextBatch(0)).toEqual({ wakeAt: 100 });
    clock.advance(99);
    expect(batcher.nextBatch(0)).toEqual({ wakeAt: 100 });
    clock.advance(1);
    expect(names(batcher.nextBatch(0).batch)).toEqual(['c:start']);
  });

  it('without preferred sizes waits for maxBatchSize or the delay', () => {
    const { batcher, clock, accept } = setup({ ...oldest, maxQueueDelayMicroseconds: 50 });
    accept(start('a'), start('b'), start('c'));
    expect(batcher.nextBatch(0)).toEqual({ wakeAt: 50 });
    accept(start('d'));
    expect(names(batcher.nextBatch(0).batch)).toEqual(['a:start', 'b:start', 'c:start', 'd:start']);
    clock.advance(50);
    expect(batcher.nextBatch(0)).toEqual({ wakeAt: undefined });
  });

  it('without a delay sends the best preferred size, else everything ready', () => {
    const { batcher, accept } = setup({ ...oldest, preferredBatchSizes: [2] });
    accept(start('a'), start('b'), start('c'));
    expect(names(batcher.nextBatch(0).batch)).toEqual(['a:start', 'b:start']);
    expect(names(batcher.nextBatch(0).batch)).toEqual(['c:start']);
  });

  it('only batches sequences seated on the instance', () => {
    const { batcher, accept } = setup({ ...oldest, instances: 2, slotsPerInstance: 1 });
    accept(start('a'), start('b'));
    expect(names(batcher.nextBatch(1).batch)).toEqual(['b:start']);
    expect(names(batcher.nextBatch(0).batch)).toEqual(['a:start']);
  });
});

describe('remove', () => {
  it('takes a queued item out for good and keeps the sequence live', () => {
    const { batcher, accept } = setup();
    const first = start('a');
    const second = step('a');
    accept(first, second);
    expect(batcher.remove(second)).toBe(true);
    expect(batcher.size).toBe(1);
    const batch = batcher.nextBatch(0).batch!;
    expect(batch.items).toEqual([first]);
    expect(batcher.remove(first)).toBe(false);
    expect(batcher.remove(second)).toBe(false);
    expect(batcher.remove(step('b'))).toBe(false);
    batcher.completed(batch);
    expect(batcher.nextBatch(0)).toEqual({ wakeAt: undefined });
    expect(batcher.liveSequences).toBe(1);
    expect(batcher.enqueue(step('a'))).toEqual({ accepted: true, restarted: false });
  });

  it('re-opens a sequence whose END was removed', () => {
    const { batcher, accept } = setup();
    const last = end('a');
    accept(start('a'), last);
    expect(batcher.remove(last)).toBe(true);
    expect(batcher.enqueue(step('a'))).toEqual({ accepted: true, restarted: false });
  });
});

describe('clear', () => {
  it('takes out every queued item; a running item still completes and the sequence idles out', () => {
    const { clock, batcher, accept } = setup({ maxSequenceIdleMicroseconds: 100 });
    const running = start('a');
    accept(running, step('a'), start('b'));
    const batch = batcher.nextBatch(0).batch!;
    expect(names(batch)).toEqual(['a:start', 'b:start']);
    accept(step('b'));
    expect(batcher.clear().map((item) => item.name).sort()).toEqual(['a:step', 'b:step']);
    expect(batcher.size).toBe(0);
    expect(batcher.nextBatch(0)).toEqual({ wakeAt: undefined });
    batcher.completed(batch);
    clock.advance(100);
    expect(batcher.takeReleased().sort()).toEqual(['a', 'b']);
  });
});

describe('drain', () => {
  it('refuses new and restarting STARTs, accepts items of live sequences, stops waiting for delays', () => {
    const { batcher, clock, accept } = setup({ slotsPerInstance: 4, minimumSlotUtilization: 1, maxQueueDelayMicroseconds: 100 });
    accept(start('a'));
    expect(batcher.nextBatch(0)).toEqual({ wakeAt: 100 });
    clock.advance(10);
    batcher.drain();
    expect(batcher.enqueue(start('b'))).toEqual({ accepted: false, reason: 'draining' });
    expect(batcher.enqueue(start('a'))).toEqual({ accepted: false, reason: 'draining' });
    const first = batcher.nextBatch(0).batch!;
    expect(names(first)).toEqual(['a:start']);
    accept(end('a'));
    expect(batcher.liveSequences).toBe(1);
    batcher.completed(first);
    batcher.completed(batcher.nextBatch(0).batch!);
    expect(batcher.liveSequences).toBe(0);
  });

  it('sends oldest candidates without waiting', () => {
    const { batcher, accept } = setup({ strategy: 'oldest', preferredBatchSizes: [4], maxQueueDelayMicroseconds: 100 });
    accept(start('a'));
    expect(batcher.nextBatch(0)).toEqual({ wakeAt: 100 });
    batcher.drain();
    expect(names(batcher.nextBatch(0).batch)).toEqual(['a:start']);
  });
});

describe('idle release', () => {
  const idle = { slotsPerInstance: 1, maxSequenceIdleMicroseconds: 100 };

  it('releases at the deadline, not before, once', () => {
    const { batcher, clock, accept } = setup(idle);
    accept(start('a'));
    expect(batcher.releaseAt()).toBeUndefined();
    const batch = batcher.nextBatch(0).batch!;
    clock.advance(10);
    batcher.completed(batch);
    expect(batcher.releaseAt()).toBe(110);
    clock.advance(99);
    expect(batcher.takeReleased()).toEqual([]);
    expect(batcher.liveSequences).toBe(1);
    clock.advance(1);
    expect(batcher.releaseAt()).toBe(110);
    expect(batcher.takeReleased()).toEqual(['a']);
    expect(batcher.takeReleased()).toEqual([]);
    expect(batcher.liveSequences).toBe(0);
    expect(batcher.releaseAt()).toBeUndefined();
    expect(batcher.enqueue(step('a'))).toEqual({ accepted: false, reason: 'not-started' });
  });

  it('restarts the idle clock on activity', () => {
    const { batcher, clock, accept } = setup(idle);
    accept(start('a'));
    batcher.completed(batcher.nextBatch(0).batch!);
    clock.advance(90);
    accept(step('a'));
    clock.advance(50);
    expect(batcher.takeReleased()).toEqual([]);
    batcher.completed(batcher.nextBatch(0).batch!);
    expect(batcher.releaseAt()).toBe(240);
    clock.advance(99);
    expect(batcher.takeReleased()).toEqual([]);
    clock.advance(1);
    expect(batcher.takeReleased()).toEqual(['a']);
  });

  it('never releases a sequence with queued or running items', () => {
    const { batcher, clock, accept } = setup({ ...idle, slotsPerInstance: 2 });
    accept(start('a'), start('b'), step('b'));
    const batch = batcher.nextBatch(0).batch!;
    clock.advance(1000);
    expect(batcher.takeReleased()).toEqual([]);
    expect(batcher.releaseAt()).toBeUndefined();
    batcher.completed(batch);
    expect(batcher.releaseAt()).toBe(1100);
  });

  it('seats the oldest backlogged sequence, with its queued items, in the released slot', () => {
    const { batcher, clock, accept } = setup(idle);
    accept(start('a'));
    batcher.completed(batcher.nextBatch(0).batch!);
    accept(start('b'), step('b'));
    clock.advance(100);
    expect(batcher.takeReleased()).toEqual(['a']);
    const batch = batcher.nextBatch(0).batch!;
    expect(names(batch)).toEqual(['b:start']);
    batcher.completed(batch);
    expect(names(batcher.nextBatch(0).batch)).toEqual(['b:step']);
  });

  it('releases a backlogged sequence whose items were all removed', () => {
    const { batcher, clock, accept } = setup(idle);
    accept(start('a'));
    const waiting = start('b');
    accept(waiting);
    clock.advance(5);
    batcher.remove(waiting);
    expect(batcher.releaseAt()).toBe(105);
    clock.advance(100);
    expect(batcher.takeReleased()).toEqual(['b']);
    expect(batcher.liveSequences).toBe(1);
  });

  it('reports released keys through releaseAt until they are taken', () => {
    const { batcher, clock, accept } = setup(idle);
    accept(start('a'));
    batcher.completed(batcher.nextBatch(0).batch!);
    clock.advance(150);
    // enqueue notices the release and refuses the stale step
    expect(batcher.enqueue(step('a'))).toEqual({ accepted: false, reason: 'not-started' });
    expect(batcher.releaseAt()).toBe(150);
    expect(batcher.takeReleased()).toEqual(['a']);
  });
});

describe('options', () => {
  it('refuses impossible sizes', () => {
    expect(() => new SequenceBatcher({ ...defaults, slotsPerInstance: 0 })).toThrow(RangeError);
    expect(() => new SequenceBatcher({ ...defaults, minimumSlotUtilization: 1.5 })).toThrow(RangeError);
  });
});

describe('many sequences', () => {
  for (const strategy of ['direct', 'oldest'] as const) {
    it(`${strategy}: 256 sequences × 20 steps through two instances run every item once, in order`, () => {
      const { batcher, clock } = setup({
        strategy,
        instances: 2,
        slotsPerInstance: 8,
        maxBatchSize: 8,
        preferredBatchSizes: strategy === 'oldest' ? [4, 8] : [],
        maxQueueDelayMicroseconds: 50,
        minimumSlotUtilization: 0.5,
      });
      const keys = Array.from({ length: 256 }, (_, k) => `s${k}`);
      for (let n = 0; n < 20; n++) {
        for (const key of keys) {
          const name = `${key}:${n}`;
          const item = { sequenceKey: key, start: n === 0, end: n === 19, name };
          expect(batcher.enqueue(item).accepted).toBe(true);
        }
      }
      const seen = new Map<string, number[]>();
      const running: (SequenceBatch<Step> | undefined)[] = [undefined, undefined];
      let rounds = 0;
      while (batcher.liveSequences > 0) {
        expect(++rounds).toBeLessThan(100_000);
        let wakeAt = Infinity;
        for (const instance of [0, 1]) {
          const done = running[instance];
          if (done) batcher.completed(done);
          const next = batcher.nextBatch(instance);
          running[instance] = next.batch;
          wakeAt = Math.min(wakeAt, next.wakeAt ?? Infinity);
          for (const item of next.batch?.items ?? []) {
            if (!item) continue;
            const steps = seen.get(item.sequenceKey) ?? [];
            steps.push(Number(item.name.split(':')[1]));
            seen.set(item.sequenceKey, steps);
          }
        }
        if (!running[0] && !running[1] && batcher.liveSequences > 0) {
          const at = Math.min(wakeAt, batcher.releaseAt() ?? Infinity);
          expect(at).toBeLessThan(Infinity);
          clock.advance(at - clock.now());
        }
      }
      expect(batcher.size).toBe(0);
      const inOrder = Array.from({ length: 20 }, (_, n) => n);
      for (const key of keys) expect(seen.get(key)).toEqual(inOrder);
    });
  }
});
