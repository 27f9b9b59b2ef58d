import { describe, expect, it } from 'vitest';
import { PriorityQueue, type PriorityQueueOptions } from '../src/priority-queue.js';
import { queueTimeout, type QueuePolicy } from '../src/queue-policy.js';

interface Item {
  readonly name: string;
  readonly priority: number;
  readonly timeoutMicroseconds: number;
}

const item = (name: string, priority = 0, timeoutMicroseconds = 0): Item => ({ name, priority, timeoutMicroseconds });

const policy = (overrides: Partial<QueuePolicy> = {}): QueuePolicy => ({
  timeoutAction: 'REJECT',
  defaultTimeoutMicroseconds: 0,
  allowTimeoutOverride: false,
  maxQueueSize: 0,
  ...overrides,
});

const queueOf = (overrides: Partial<PriorityQueueOptions> = {}) =>
  new PriorityQueue<Item>({ priorityLevels: 0, defaultPriorityLevel: 0, defaultQueuePolicy: policy(), ...overrides });

/** Names in service order, emptying the queue. */
function drain(queue: PriorityQueue<Item>): string[] {
  const names: string[] = [];
  while (queue.size > 0) names.push(queue.shift().name);
  return names;
}

describe('queueTimeout', () => {
  it('lets a request shorten the default timeout when the policy allows it', () => {
    expect(queueTimeout(policy({ defaultTimeoutMicroseconds: 1000, allowTimeoutOverride: true }), 300)).toBe(300);
  });

  it('ignores a request timeout longer than the default', () => {
    expect(queueTimeout(policy({ defaultTimeoutMicroseconds: 1000, allowTimeoutOverride: true }), 5000)).toBe(1000);
  });

  it('ignores the request timeout when the policy does not allow overriding', () => {
    expect(queueTimeout(policy({ defaultTimeoutMicroseconds: 1000 }), 300)).toBe(1000);
  });

  it('ignores the request timeout when the policy has no timeout (as Triton)', () => {
    expect(queueTimeout(policy({ allowTimeoutOverride: true }), 300)).toBe(0);
  });

  it('treats a request timeout of 0 as none asked', () => {
    expect(queueTimeout(policy({ defaultTimeoutMicroseconds: 1000, allowTimeoutOverride: true }), 0)).toBe(1000);
  });
});

describe('PriorityQueue', () => {
  it('serves higher levels first, FIFO within a level', () => {
    const queue = queueOf({ priorityLevels: 3, defaultPriorityLevel: 2 });
    for (const [name, priority] of [['c1', 3], ['b1', 2], ['a1', 1], ['c2', 3], ['a2', 1]] as const) {
      queue.enqueue(item(name, priority), 0);
    }
    expect(drain(queue)).toEqual(['a1', 'a2', 'b1', 'c1', 'c2']);
  });

  it('puts priority 0 and priorities above the level count on the default level', () => {
    const queue = queueOf({ priorityLevels: 3, defaultPriorityLevel: 2 });
    queue.enqueue(item('low', 3), 0);
    queue.enqueue(item('zero', 0), 0);
    queue.enqueue(item('high', 1), 0);
    queue.enqueue(item('beyond', 9), 0);
    expect(drain(queue)).toEqual(['high', 'zero', 'beyond', 'low']);
  });

  it('ignores priorities when they are off', () => {
    const queue = queueOf();
    queue.enqueue(item('a', 3), 0);
    queue.enqueue(item('b', 1), 0);
    queue.enqueue(item('c', 2), 0);
    expect(drain(queue)).toEqual(['a', 'b', 'c']);
  });

  it("serves a level's DELAY-expired items after its other items and before lower levels", () => {
    const delay = policy({ timeoutAction: 'DELAY', defaultTimeoutMicroseconds: 100 });
    const queue = queueOf({ priorityLevels: 2, defaultPriorityLevel: 1, defaultQueuePolicy: delay });
    queue.enqueue(item('late', 1), 0);
    queue.enqueue(item('other-level', 2), 150);
    queue.enqueue(item('fresh', 1), 150);
    queue.expire(150);
    expect(queue.size).toBe(3);
    expect(queue.takeExpired()).toEqual([]);
    expect(drain(queue)).toEqual(['fresh', 'late', 'other-level']);
  });

  it('walks items in service order with first() and after()', () => {
    const queue = queueOf({ priorityLevels: 2, defaultPriorityLevel: 2 });
    queue.enqueue(item('b'), 0);
    queue.enqueue(item('a', 1), 0);
    const names: string[] = [];
    for (let slot = queue.first(); slot; slot = queue.after(slot)) names.push(slot.item.name);
    expect(names).toEqual(['a', 'b']);
    expect(queue.size).toBe(2);
  });

  it('reports REJECT expiries in deadline order, once', () => {
    const queue = queueOf({ defaultQueuePolicy: policy({ defaultTimeoutMicroseconds: 1000, allowTimeoutOverride: true }) });
    queue.enqueue(item('default'), 0);
    queue.enqueue(item('short', 0, 300), 0);
    queue.enqueue(item('medium', 0, 600), 0);
    expect(queue.nextDeadline()).toBe(300);
    queue.expire(1000);
    expect(queue.size).toBe(0);
    expect(queue.nextDeadline()).toBe(300);
    expect(queue.takeExpired().map((i) => i.name)).toEqual(['short', 'medium', 'default']);
    expect(queue.takeExpired()).toEqual([]);
    expect(queue.nextDeadline()).toBeUndefined();
  });

  it('keeps deadlines right through many removals', () => {
    const queue = queueOf({ defaultQueuePolicy: policy({ defaultTimeoutMicroseconds: 1_000_000, allowTimeoutOverride: true }) });
    const items = Array.from({ length: 2000 }, (_, i) => item(`i${i}`, 0, 1 + ((i * 7919) % 999_983)));
    for (const each of items) queue.enqueue(each, 0);
    const kept = items.filter((_, i) => i % 3 !== 0);
    for (const [i, each] of items.entries()) if (i % 3 === 0) expect(queue.remove(each)).toBe(true);
    queue.expire(1_000_000);
    const expired = queue.takeExpired();
    expect(expired.map((i) => i.timeoutMicroseconds)).toEqual(kept.map((i) => i.timeoutMicroseconds).sort((a, b) => a - b));
    expect(new Set(expired)).toEqual(new Set(kept));
  });

  it('remove() takes an item out of the middle of a level and of its delayed items', () => {
    const delay = policy({ timeoutAction: 'DELAY', defaultTimeoutMicroseconds: 100 });
    const queue = queueOf({ defaultQueuePolicy: delay });
    const [a, b, c, d] = [item('a'), item('b'), item('c'), item('d')];
    queue.enqueue(a, 0);
    queue.enqueue(b, 0);
    queue.enqueue(c, 200);
    queue.enqueue(d, 200);
    queue.expire(200);
    expect(queue.remove(b)).toBe(true);
    expect(queue.remove(c)).toBe(true);
    expect(queue.remove(c)).toBe(false);
    expect(drain(queue)).toEqual(['d', 'a']);
    expect(queue.remove(a)).toBe(false);
  });
});
