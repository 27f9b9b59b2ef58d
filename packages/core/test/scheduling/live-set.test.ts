import { describe, expect, test } from 'vitest';
import { LiveSet } from '../../src/scheduling/live-set.js';

const member = (name: string) => ({ name, liveIndex: -1 });

describe('LiveSet', () => {
  test('adds and deletes in any order, and lists what is left', () => {
    const set = new LiveSet<ReturnType<typeof member>>();
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(member) as [ReturnType<typeof member>, ReturnType<typeof member>, ReturnType<typeof member>, ReturnType<typeof member>];
    for (const m of [a, b, c, d]) set.add(m);
    set.delete(b);
    set.delete(a);
    expect(set.size).toBe(2);
    expect(set.toArray().map((m) => m.name).sort()).toEqual(['c', 'd']);
    expect([a.liveIndex, b.liveIndex]).toEqual([-1, -1]);
    set.add(a);
    set.delete(d);
    set.delete(c);
    expect(set.toArray()).toEqual([a]);
    expect(a.liveIndex).toBe(0);
  });

  test('deleting a member twice, or one never added, changes nothing', () => {
    const set = new LiveSet<ReturnType<typeof member>>();
    const a = member('a');
    const b = member('b');
    set.add(a);
    set.add(b);
    set.delete(a);
    set.delete(a);
    set.delete(member('stranger'));
    expect(set.toArray()).toEqual([b]);
    expect(set.size).toBe(1);
  });

  test('a member that left is named nowhere in the set', () => {
    const set = new LiveSet<ReturnType<typeof member>>();
    const members = Array.from({ length: 8 }, (_, i) => member(String(i)));
    for (const m of members) set.add(m);
    for (const m of members) set.delete(m);
    expect(set.size).toBe(0);
    // The array behind it holds no reference that would keep a finished request alive.
    expect((set as unknown as { members: unknown[] }).members.every((slot) => slot === undefined)).toBe(true);
  });
});
