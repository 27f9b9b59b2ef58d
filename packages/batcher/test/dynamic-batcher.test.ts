import { describe, expect, it } from 'vitest';
import { DynamicBatcher, type BatchItem, type DynamicBatcherOptions } from '../src/dynamic-batcher.js';
import type { QueuePolicy } from '../src/queue-policy.js';
import { FakeClock } from './fake-clock.js';

interface Item extends BatchItem {
  readonly name: string;
}

function item(name: string, fields: Partial<Omit<Item, 'name'>> = {}): Item {
  return { name, batchSize: 1, priority: 0, timeoutMicroseconds: 0, ...fields };
}

const noLimits: QueuePolicy = { timeoutAction: 'REJECT', defaultTimeoutMicroseconds: 0, allowTimeoutOverride: false, maxQueueSize: 0 };

function setup(overrides: Partial<DynamicBatcherOptions> = {}, clock = new FakeClock()) {
  const start = clock.now();
  const batcher = new DynamicBatcher<Item>(
    {
      maxBatchSize: 8,
      preferredBatchSizes: [],
      maxQueueDelayMicroseconds: 0,
      priorityLevels: 0,
      defaultPriorityLevel: 0,
      defaultQueuePolicy: noLimits,
      ...overrides,
    },
    clock,
  );
  /** Enqueues items named by `names` (one row each unless given), expecting each to be queued. */
  const add = (...items: (string | Item)[]) => {
    for (const each of items) expect(batcher.enqueue(typeof each === 'string' ? item(each) : each)).toEqual({ queued: true });
  };
  /** The names in the batch nextBatch() gives, or its `{ wakeAt }` when it says to wait. */
  const next = () => {
    const decision = batcher.nextBatch();
    return decision.batch ? decision.batch.map((i) => i.name) : { wakeAt: decision.wakeAt };
  };
  return { clock, start, batcher, add, next };
}

describe('DynamicBatcher: preferred batch sizes', () => {
  it('sends as soon as the queued rows reach a preferred size', () => {
    const { start, batcher, add, next } = setup({ preferredBatchSizes: [4], maxQueueDelayMicroseconds: 1000 });
    add('a', 'b', 'c');
    expect(next()).toEqual({ wakeAt: start + 1000 });
    add('d');
    expect(next()).toEqual(['a', 'b', 'c', 'd']);
    expect(batcher.size).toBe(0);
  });

  it('sends a smaller preferred size at once too', () => {
    const { start, add, next } = setup({ preferredBatchSizes: [2, 6], maxQueueDelayMicroseconds: 1000 });
    add('a');
    expect(next()).toEqual({ wakeAt: start + 1000 });
    add('b');
    expect(next()).toEqual(['a', 'b']);
  });

  it('sends the largest preferred size reached, leaving the rest queued', () => {
    const { start, batcher, add, next } = setup({ preferredBatchSizes: [2, 4], maxQueueDelayMicroseconds: 1000 });
    add('a', 'b', 'c', 'd', 'e');
    expect(next()).toEqual(['a', 'b', 'c', 'd']);
    expect(next()).toEqual({ wakeAt: start + 1000 });
    expect(batcher.size).toBe(1);
  });

  it('once the delay has expired, sends everything that fits, not just the preferred size (as Triton)', () => {
    const { clock, add, next } = setup({ preferredBatchSizes: [4], maxQueueDelayMicroseconds: 1000 });
    add('a', 'b', 'c', 'd', 'e', 'f');
    clock.advance(1000);
    expect(next()).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
  });

  it('when rows pass the largest preferred size without hitting one, sends what came before at once', () => {
    const { clock, start, add, next } = setup({ preferredBatchSizes: [4], maxQueueDelayMicroseconds: 1000 });
    add(item('a', { batchSize: 3 }), item('b', { batchSize: 3 }), item('c', { batchSize: 3 }));
    expect(next()).toEqual(['a']);
    expect(next()).toEqual(['b']);
    expect(next()).toEqual({ wakeAt: start + 1000 });
    clock.advance(1000);
    expect(next()).toEqual(['c']);
  });

  it('with no preferred sizes, fills up to maxBatchSize at once', () => {
    const { start, add, next } = setup({ maxBatchSize: 3, maxQueueDelayMicroseconds: 1000 });
    add('a', 'b', 'c', 'd');
    expect(next()).toEqual(['a', 'b', 'c']);
    expect(next()).toEqual({ wakeAt: start + 1000 });
  });

  it('with maxBatchSize 1, sends one item per batch without waiting', () => {
    const { add, next } = setup({ maxBatchSize: 1, maxQueueDelayMicroseconds: 1000 });
    add('a', 'b');
    expect(next()).toEqual(['a']);
    expect(next()).toEqual(['b']);
    expect(next()).toEqual({ wakeAt: undefined });
  });
});

describe('DynamicBatcher: queue delay', () => {
  it('with delay 0, sends whatever is queued', () => {
    const { add, next } = setup({ preferredBatchSizes: [4] });
    add('a', 'b');
    expect(next()).toEqual(['a', 'b']);
    expect(next()).toEqual({ wakeAt: undefined });
  });

  it('with delay 0, still sends the preferred size first when one is reached', () => {
    const { add, next } = setup({ preferredBatchSizes: [4] });
    add('a', 'b', 'c', 'd', 'e');
    expect(next()).toEqual(['a', 'b', 'c', 'd']);
    expect(next()).toEqual(['e']);
  });

  it('waits until the delay since the oldest item expires, and says when', () => {
    const { clock, start, add, next } = setup({ preferredBatchSizes: [4], maxQueueDelayMicroseconds: 1000 });
    add('a');
    clock.advance(300);
    add('b');
    expect(next()).toEqual({ wakeAt: start + 1000 });
    clock.advance(699);
    expect(next()).toEqual({ wakeAt: start + 1000 });
    clock.advance(1);
    expect(next()).toEqual(['a', 'b']);
    expect(next()).toEqual({ wakeAt: undefined });
  });

  it('decides from one clock reading: when it says to wait, it names the time the batch comes (issue 18)', () => {
    // The clock moves 1 µs on every read, so for some delay it expires between two reads of one
    // decision: "wait" from one reading and "ready now" from the next named no time at all.
    for (let delay = 1; delay <= 10; delay++) {
      const { clock, add, next } = setup({ maxQueueDelayMicroseconds: delay }, new FakeClock(0, 1));
      add('a');
      let decision = next();
      if (!Array.isArray(decision)) {
        expect(decision.wakeAt, `delay ${delay}`).toBeDefined();
        clock.advance(decision.wakeAt! - clock.now());
        decision = next();
      }
      expect(decision, `delay ${delay}`).toEqual(['a']);
    }
  });

  it('counts the delay from the oldest item still queued', () => {
    const { clock, start, batcher, next } = setup({ preferredBatchSizes: [4], maxQueueDelayMicroseconds: 1000 });
    const a = item('a');
    batcher.enqueue(a);
    clock.advance(400);
    batcher.enqueue(item('b'));
    expect(batcher.remove(a)).toBe(true);
    expect(next()).toEqual({ wakeAt: start + 1400 });
    clock.advance(600);
    expect(next()).toEqual({ wakeAt: start + 1400 });
    clock.advance(400);
    expect(next()).toEqual(['b']);
  });

  it('gives successive batches while instances are free', () => {
    const { start, add, next } = setup({ maxBatchSize: 2, maxQueueDelayMicroseconds: 1000 });
    add('a', 'b', 'c', 'd', 'e');
    expect(next()).toEqual(['a', 'b']);
    expect(next()).toEqual(['c', 'd']);
    expect(next()).toEqual({ wakeAt: start + 1000 });
  });

  it('flush() stops waiting for the delay', () => {
    const { start, batcher, add, next } = setup({ preferredBatchSizes: [4], maxQueueDelayMicroseconds: 1000 });
    add('a', 'b');
    expect(next()).toEqual({ wakeAt: start + 1000 });
    batcher.flush();
    expect(next()).toEqual(['a', 'b']);
    add('c', 'd', 'e', 'f', 'g');
    expect(next()).toEqual(['c', 'd', 'e', 'f', 'g']);
  });
});

describe('DynamicBatcher: batch boundaries', () => {
  it('counts multi-row items against maxBatchSize', () => {
    const { clock, add, next } = setup({ maxBatchSize: 8, preferredBatchSizes: [8], maxQueueDelayMicroseconds: 1000 });
    add(item('a', { batchSize: 3 }), item('b', { batchSize: 4 }), item('c', { batchSize: 2 }));
    clock.advance(1000);
    expect(next()).toEqual(['a', 'b']);
    expect(next()).toEqual(['c']);
  });

  it('ends the batch at an item larger than the space left; it goes first in the next batch', () => {
    const { clock, add, next } = setup({ maxBatchSize: 4, preferredBatchSizes: [4], maxQueueDelayMicroseconds: 1000 });
    add(item('a', { batchSize: 2 }), item('b', { batchSize: 3 }), item('c', { batchSize: 1 }));
    clock.advance(1000);
    expect(next()).toEqual(['a']);
    expect(next()).toEqual(['b', 'c']);
  });

  it('ends the batch at an item with another batch key, and sends it without waiting', () => {
    const { start, batcher, add, next } = setup({ preferredBatchSizes: [4], maxQueueDelayMicroseconds: 1000 });
    add(item('a', { batchKey: 'x' }), item('b', { batchKey: 'x' }), item('c', { batchKey: 'y' }), item('d', { batchKey: 'x' }));
    expect(next()).toEqual(['a', 'b']);
    expect(next()).toEqual(['c']);
    expect(next()).toEqual({ wakeAt: start + 1000 });
    expect(batcher.size).toBe(1);
  });

  it('batches an item without a key with any key', () => {
    const { clock, start, add, next } = setup({ preferredBatchSizes: [8], maxQueueDelayMicroseconds: 1000 });
    add(item('a'), item('b', { batchKey: 'x' }), item('c'), item('d', { batchKey: 'x' }), item('e', { batchKey: 'y' }));
    expect(next()).toEqual(['a', 'b', 'c', 'd']);
    expect(next()).toEqual({ wakeAt: start + 1000 });
    clock.advance(1000);
    expect(next()).toEqual(['e']);
  });
});

describe('DynamicBatcher: priorities', () => {
  it('serves higher levels first and maps priority 0 and out-of-range priorities to the default level', () => {
    const { batcher, add, next } = setup({ priorityLevels: 3, defaultPriorityLevel: 2 });
    add(item('low', { priority: 3 }), item('zero', { priority: 0 }), item('beyond', { priority: 7 }));
    add(item('high', { priority: 1 }), item('two', { priority: 2 }));
    batcher.flush();
    expect(next()).toEqual(['high', 'zero', 'beyond', 'two', 'low']);
  });

  it('keeps FIFO order within a level across batches', () => {
    const { add, next } = setup({ maxBatchSize: 2, priorityLevels: 2, defaultPriorityLevel: 2 });
    add(item('b1'), item('a1', { priority: 1 }), item('b2'), item('b3'), item('a2', { priority: 1 }));
    expect(next()).toEqual(['a1', 'a2']);
    expect(next()).toEqual(['b1', 'b2']);
    expect(next()).toEqual(['b3']);
  });

  it('refuses a newcomer to a full level, naming the level, and leaves other levels and queued items alone', () => {
    const { batcher, add, next } = setup({
      preferredBatchSizes: [8],
      maxQueueDelayMicroseconds: 1000,
      priorityLevels: 2,
      defaultPriorityLevel: 1,
      priorityQueuePolicy: new Map([[2, { ...noLimits, maxQueueSize: 2 }]]),
    });
    const b1 = item('b1', { priority: 2 });
    add(b1, item('b2', { priority: 2 }));
    const refused = batcher.enqueue(item('b3', { priority: 2 }));
    expect(refused.queued).toBe(false);
    expect(!refused.queued && refused.reason).toMatch(/maximum queue size.*priority level 2/);
    add('a1', 'a2', 'a3');
    expect(batcher.size).toBe(5);
    batcher.remove(b1);
    add(item('b4', { priority: 2 }));
    batcher.flush();
    expect(next()).toEqual(['a1', 'a2', 'a3', 'b2', 'b4']);
  });

  it('with priorities off, max queue size bounds the single queue', () => {
    const { batcher, add, next } = setup({ defaultQueuePolicy: { ...noLimits, maxQueueSize: 1 }, maxQueueDelayMicroseconds: 1000 });
    add('a');
    expect(batcher.enqueue(item('b'))).toEqual({ queued: false, reason: 'Exceeds maximum queue size' });
    batcher.flush();
    expect(next()).toEqual(['a']);
    add('c');
  });
});

describe('DynamicBatcher: queue timeouts', () => {
  const reject = (timeout: number, more: Partial<QueuePolicy> = {}): QueuePolicy => ({
    ...noLimits,
    defaultTimeoutMicroseconds: timeout,
    ...more,
  });

  it('REJECT: the wake time includes the deadline; the expired item comes back from takeExpired() and is never batched', () => {
    const { clock, start, batcher, add, next } = setup({
      preferredBatchSizes: [4],
      maxQueueDelayMicroseconds: 1000,
      defaultQueuePolicy: reject(500),
    });
    add('a');
    clock.advance(100);
    add('b');
    expect(next()).toEqual({ wakeAt: start + 500 });
    clock.advance(400);
    expect(batcher.size).toBe(1);
    expect(batcher.takeExpired().map((i) => i.name)).toEqual(['a']);
    expect(batcher.takeExpired()).toEqual([]);
    // The delay now counts from b, whose own deadline comes first.
    expect(next()).toEqual({ wakeAt: start + 600 });
    clock.advance(100);
    // Passed: takeExpired() has it.
    expect(next()).toEqual({ wakeAt: start + 600 });
    expect(batcher.takeExpired().map((i) => i.name)).toEqual(['b']);
    expect(next()).toEqual({ wakeAt: undefined });
  });

  it('REJECT: the wake time stays at a passed deadline until takeExpired() collects it', () => {
    const { clock, start, batcher, add, next } = setup({ defaultQueuePolicy: reject(500) });
    add('a', 'b');
    clock.advance(800);
    batcher.flush();
    expect(next()).toEqual({ wakeAt: start + 500 });
    expect(batcher.nextTimeout()).toBe(start + 500);
    expect(batcher.takeExpired().map((i) => i.name)).toEqual(['a', 'b']);
    expect(next()).toEqual({ wakeAt: undefined });
  });

  it('a refused level counts only live items: expired ones free their place', () => {
    const { clock, batcher, add } = setup({ defaultQueuePolicy: reject(500, { maxQueueSize: 1 }), maxQueueDelayMicroseconds: 1000 });
    add('a');
    expect(batcher.enqueue(item('b')).queued).toBe(false);
    clock.advance(500);
    add('c');
    expect(batcher.takeExpired().map((i) => i.name)).toEqual(['a']);
  });

  it('allow_timeout_override: a shorter request timeout applies, a longer one does not, and only when allowed', () => {
    const { clock, batcher, add } = setup({
      priorityLevels: 2,
      defaultPriorityLevel: 1,
      maxQueueDelayMicroseconds: 1_000_000,
      defaultQueuePolicy: reject(1000, { allowTimeoutOverride: true }),
      priorityQueuePolicy: new Map([[2, reject(1000)]]),
    });
    add(item('shorter', { timeoutMicroseconds: 200 }), item('longer', { timeoutMicroseconds: 5000 }));
    add(item('not-allowed', { priority: 2, timeoutMicroseconds: 200 }));
    clock.advance(200);
    expect(batcher.takeExpired().map((i) => i.name)).toEqual(['shorter']);
    clock.advance(800);
    expect(batcher.takeExpired().map((i) => i.name)).toEqual(['longer', 'not-allowed']);
  });

  it('allow_timeout_override with no default timeout: the request timeout is ignored (as Triton)', () => {
    const { clock, batcher, add } = setup({
      maxQueueDelayMicroseconds: 1000,
      defaultQueuePolicy: reject(0, { allowTimeoutOverride: true }),
    });
    add(item('a', { timeoutMicroseconds: 100 }));
    clock.advance(500);
    expect(batcher.takeExpired()).toEqual([]);
    expect(batcher.size).toBe(1);
  });

  it('DELAY: an expired item still runs, after the other items of its level', () => {
    const { clock, start, batcher, add, next } = setup({
      preferredBatchSizes: [8],
      maxQueueDelayMicroseconds: 10_000,
      priorityLevels: 2,
      defaultPriorityLevel: 1,
      defaultQueuePolicy: reject(100, { timeoutAction: 'DELAY' }),
    });
    add('late');
    expect(next()).toEqual({ wakeAt: start + 100 });
    clock.advance(100);
    add(item('other-level', { priority: 2 }), 'fresh');
    expect(batcher.takeExpired()).toEqual([]);
    batcher.flush();
    expect(next()).toEqual(['fresh', 'late', 'other-level']);
  });
});

describe('DynamicBatcher: remove()', () => {
  it('takes an item out of sizes, preferred sizes and batches; false when not queued', () => {
    const { start, batcher, add, next } = setup({ preferredBatchSizes: [2], maxQueueDelayMicroseconds: 1000 });
    const a = item('a');
    add(a, 'b');
    expect(batcher.remove(a)).toBe(true);
    expect(batcher.remove(a)).toBe(false);
    expect(batcher.size).toBe(1);
    expect(next()).toEqual({ wakeAt: start + 1000 });
    add('c');
    expect(next()).toEqual(['b', 'c']);
    expect(batcher.remove(a)).toBe(false);
  });

  it('a removed item no longer expires', () => {
    const { clock, batcher, next } = setup({ defaultQueuePolicy: { ...noLimits, defaultTimeoutMicroseconds: 100 } });
    const a = item('a');
    batcher.enqueue(a);
    batcher.remove(a);
    expect(next()).toEqual({ wakeAt: undefined });
    clock.advance(200);
    expect(batcher.takeExpired()).toEqual([]);
  });
});

describe('DynamicBatcher: clear() and nextTimeout()', () => {
  it('clear() takes out every item, expired REJECT ones included, and leaves nothing to wake for', () => {
    const { clock, batcher, add, next } = setup({ preferredBatchSizes: [4], maxQueueDelayMicroseconds: 1000, defaultQueuePolicy: { ...noLimits, defaultTimeoutMicroseconds: 100 } });
    add('a');
    clock.advance(200);
    add('b', 'c');
    expect(batcher.clear().map((i) => i.name).sort()).toEqual(['a', 'b', 'c']);
    expect(batcher.size).toBe(0);
    expect(next()).toEqual({ wakeAt: undefined });
    expect(batcher.takeExpired()).toEqual([]);
  });

  it('nextTimeout() gives the earliest timeout deadline, not the queue delay', () => {
    const { start, batcher, add, next } = setup({ preferredBatchSizes: [4], maxQueueDelayMicroseconds: 100, defaultQueuePolicy: { ...noLimits, defaultTimeoutMicroseconds: 500 } });
    expect(batcher.nextTimeout()).toBeUndefined();
    add('a');
    expect(next()).toEqual({ wakeAt: start + 100 });
    expect(batcher.nextTimeout()).toBe(start + 500);
  });
});

describe('DynamicBatcher: under load', () => {
  it('handles 100k enqueues, removals and batches in linear time', () => {
    const { clock, batcher } = setup({
      maxBatchSize: 32,
      preferredBatchSizes: [16, 32],
      maxQueueDelayMicroseconds: 100,
      defaultQueuePolicy: { ...noLimits, defaultTimeoutMicroseconds: 1_000_000_000, allowTimeoutOverride: true },
    });
    const items = Array.from({ length: 100_000 }, (_, i) => item(`i${i}`, { timeoutMicroseconds: 1_000_000 + (i % 997) * 1000 }));
    for (const each of items) batcher.enqueue(each);
    for (const [i, each] of items.entries()) if (i % 2 === 0) batcher.remove(each);
    const sent: Item[] = [];
    for (let next = batcher.nextBatch(); next.batch; next = batcher.nextBatch()) {
      sent.push(...next.batch);
      clock.advance(1);
    }
    expect(sent.length).toBe(50_000);
    expect(sent.every((each, i) => each === items[2 * i + 1])).toBe(true);
    expect(batcher.size).toBe(0);
    expect(batcher.nextBatch()).toEqual({ wakeAt: undefined });
  });
});

describe('DynamicBatcher: options', () => {
  it('refuses preferred sizes above maxBatchSize and a default level outside the levels', () => {
    const base = { maxBatchSize: 4, maxQueueDelayMicroseconds: 0, defaultQueuePolicy: noLimits };
    expect(() => new DynamicBatcher({ ...base, preferredBatchSizes: [8], priorityLevels: 0, defaultPriorityLevel: 0 })).toThrow(RangeError);
    expect(() => new DynamicBatcher({ ...base, preferredBatchSizes: [], priorityLevels: 2, defaultPriorityLevel: 0 })).toThrow(RangeError);
  });
});
