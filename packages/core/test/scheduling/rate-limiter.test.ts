import { describe, expect, it } from 'vitest';
import { LimitedInstance, RateLimiter, type InstanceRateLimit } from '../../src/scheduling/rate-limiter.js';

/** An instance that records its grants in `granted`, in order. */
function instance(label: string, limit: InstanceRateLimit, granted: string[], device = 0): LimitedInstance {
  return new LimitedInstance(label, limit, device, () => granted.push(label));
}
const needs = (count: number, priority = 0, global = false): InstanceRateLimit => ({ resources: [{ name: 'R1', global, count }], priority });

describe('RateLimiter', () => {
  it('gives each resource, by default, the most any instance needs, and grants while they last', () => {
    const granted: string[] = [];
    const limiter = new RateLimiter();
    const [a, b, c] = [instance('a', needs(2), granted), instance('b', needs(3), granted), instance('c', needs(1), granted)];
    limiter.register([a, b, c]);
    limiter.stage(a); // 2 of 3
    limiter.stage(c); // 3 of 3
    limiter.stage(b); // needs 3: waits
    expect(granted).toEqual(['a', 'c']);
    limiter.release(a);
    expect(granted).toEqual(['a', 'c']); // 1 in use: b still waits
    limiter.release(c);
    expect(granted).toEqual(['a', 'c', 'b']);
  });

  it('lets the waiting instance with the lowest executions × priority go first, and no one overtake it', () => {
    const granted: string[] = [];
    const limiter = new RateLimiter();
    const holder = instance('holder', needs(4), granted);
    const high = instance('high', needs(4, 1), granted);
    const low = instance('low', needs(4, 2), granted);
    const small = instance('small', needs(1, 1), granted);
    limiter.register([holder, high, low, small]);
    limiter.stage(holder);
    high.executions = low.executions = 2; // scaled: high 2, low 4
    limiter.stage(low);
    limiter.stage(high);
    small.executions = 3; // scaled 3: behind high, ahead of low
    limiter.stage(small);
    // small needs 1 copy and 0 are free: it waits too, behind high (Triton's head of line).
    limiter.release(holder);
    expect(granted).toEqual(['holder', 'high']);
    limiter.release(high);
    expect(granted).toEqual(['holder', 'high', 'small']);
    limiter.release(small);
    expect(granted).toEqual(['holder', 'high', 'small', 'low']);
  });

  it('hands a grant given back unused to the next in line, without counting an execution', () => {
    const granted: string[] = [];
    const limiter = new RateLimiter();
    const [a, b] = [instance('a', needs(1), granted), instance('b', needs(1), granted)];
    limiter.register([a, b]);
    limiter.stage(a);
    limiter.stage(b);
    limiter.giveBack(a);
    expect(granted).toEqual(['a', 'b']);
    expect(a.executions).toBe(0);
  });

  it('keeps a device resource per device and a global one for the whole server', () => {
    const granted: string[] = [];
    const limiter = new RateLimiter();
    const [d0, d1] = [instance('d0', needs(1), granted, 0), instance('d1', needs(1), granted, 1)];
    const [g0, g1] = [
      instance('g0', { resources: [{ name: 'G', global: true, count: 1 }], priority: 0 }, granted, 0),
      instance('g1', { resources: [{ name: 'G', global: true, count: 1 }], priority: 0 }, granted, 1),
    ];
    limiter.register([d0, d1, g0, g1]);
    for (const each of [d0, d1, g0, g1]) limiter.stage(each);
    expect(granted).toEqual(['d0', 'd1', 'g0']);
  });

  it('refuses, naming the resource and the instance, counts given explicitly that cannot run an instance', () => {
    const limiter = new RateLimiter([{ name: 'R1', count: 2 }]);
    const big = instance(`model 'm' instance m_0`, needs(4), []);
    expect(() => limiter.register([big])).toThrow(
      'Resource count for "R1" is limited to 2 which will prevent scheduling of one or more model instances, the minimum required count is 4 (model \'m\' instance m_0)',
    );
    // Refused instances are not kept: a fitting one registers after.
    limiter.register([instance('fits', needs(2), [])]);
  });

  it('gives a resource not named among explicit ones no copies, and reads device-specific counts first', () => {
    expect(() => new RateLimiter([{ name: 'OTHER', count: 9 }]).register([instance('m', needs(1), [])])).toThrow('Resource count for "R1" is limited to 0');
    const granted: string[] = [];
    const limiter = new RateLimiter([{ name: 'R1', count: 1 }, { name: 'R1', count: 2, device: 1 }]);
    const on1 = [instance('x', needs(1), granted, 1), instance('y', needs(1), granted, 1)];
    const on0 = [instance('p', needs(1), granted, 0), instance('q', needs(1), granted, 0)];
    limiter.register([...on1, ...on0]);
    for (const each of [...on1, ...on0]) limiter.stage(each);
    expect(granted).toEqual(['x', 'y', 'p']);
  });

  it('refuses a resource named both global and per device', () => {
    const limiter = new RateLimiter();
    expect(() => limiter.register([instance('a', needs(1, 0, true), []), instance('b', needs(1), [])])).toThrow(
      'Resource "R1" is present as both global and device-specific resource in the model configuration.',
    );
  });

  it('refuses bad explicit resources naming the field', () => {
    expect(() => new RateLimiter([{ name: 'R', count: -1 }])).toThrow("rate limiter resource 'R': count must be a non-negative integer, got -1");
    expect(() => new RateLimiter([{ name: '', count: 1 }])).toThrow('a rate limiter resource needs a name');
    expect(() => new RateLimiter([{ name: 'R', count: 1, device: 1.5 }])).toThrow("rate limiter resource 'R': device must be a non-negative integer, got 1.5");
  });
});
