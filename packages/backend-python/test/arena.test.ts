import { describe, expect, test } from 'vitest';
import { Arena } from '../src/arena.js';
import { PeerRegions } from '../src/peer-regions.js';
import { SHM_DIR, addonMissing, filesWith, useShmPrefix } from './helpers.js';

describe.skipIf(addonMissing !== undefined)('Arena (the owner side)', () => {
  const prefix = useShmPrefix();
  const arena = (initialSize?: number) => new Arena(SHM_DIR, `${prefix.current}-n`, initialSize);

  test('the first region is 1 MiB, made at the first allocation; offsets are 64-byte aligned; lease ids count from 1', () => {
    const a = arena();
    expect(filesWith(prefix.current)).toEqual([]);
    const first = a.allocate(10);
    const second = a.allocate(100);
    expect(first).toMatchObject({ lease: 1, offset: 0 });
    expect(second).toMatchObject({ lease: 2, offset: 64 });
    expect(first.region).toBe(second.region);
    expect(first.region).toMatchObject({ name: `${prefix.current}-n0`, size: 1 << 20 });
    expect(filesWith(prefix.current)).toEqual([`${prefix.current}-n0`]);
    a.close();
  });

  test('zero bytes need no lease and no region', () => {
    const a = arena();
    expect(a.allocate(0)).toEqual({ lease: null, region: null, offset: 0 });
    expect(a.allocateMany([0, 0])).toEqual({ lease: null, region: null, offsets: [0, 0] });
    expect(filesWith(prefix.current)).toEqual([]);
    expect(a.release(null)).toBe(false);
    a.close();
  });

  test('allocateMany places a frame\'s tensors under one lease, each 64-byte aligned; zero-byte ones get offset 0', () => {
    const a = arena();
    a.allocate(1);
    const many = a.allocateMany([0, 10, 0, 100, 64]);
    expect(many.lease).toBe(2);
    expect(many.offsets).toEqual([0, 64, 0, 128, 256]);
    expect(a.allocate(1).offset).toBe(320);
    a.close();
  });

  test('released space is reused: an empty ring starts again at 0 in the same region', () => {
    const a = arena(4096);
    const first = a.allocate(1000);
    expect(a.release(first.lease)).toBe(true);
    expect(a.release(first.lease)).toBe(false);
    expect(a.release(99)).toBe(false);
    const again = a.allocate(4096);
    expect(again).toMatchObject({ offset: 0, region: first.region });
    a.close();
  });

  test('the ring wraps to 0 when the end is too short and the oldest live allocation leaves room', () => {
    const a = arena(4096);
    const [x, y, z] = [a.allocate(1024), a.allocate(1024), a.allocate(1024)];
    expect([x.offset, y.offset, z.offset]).toEqual([0, 1024, 2048]);
    a.release(x.lease);
    expect(a.allocate(1024).offset).toBe(3072); // the end still fits
    const wrapped = a.allocate(1024);
    expect(wrapped).toMatchObject({ offset: 0, region: x.region }); // [0, 1024) is free, the oldest live is at 1024
    a.release(y.lease);
    expect(a.allocate(1024)).toMatchObject({ offset: 1024, region: x.region }); // the gap behind the wrapped newest
    a.close();
  });

  test('out-of-order releases reclaim only the released prefix of the ring', () => {
    const held = arena(4096);
    const leases = [0, 1, 2, 3].map(() => held.allocate(1024));
    held.release(leases[1]!.lease);
    held.release(leases[2]!.lease);
    // [1024, 3072) is free but the oldest live allocation is still at 0: nothing fits, so it grows.
    expect(held.allocate(1024).region!.name).toBe(`${prefix.current}-n1`);
    held.close();

    const freed = new Arena(SHM_DIR, `${prefix.current}-p`, 4096);
    const more = [0, 1, 2, 3].map(() => freed.allocate(1024));
    freed.release(more[2]!.lease);
    freed.release(more[1]!.lease);
    freed.release(more[0]!.lease); // now [0, 3072) is a released prefix
    expect(freed.allocate(3072)).toMatchObject({ offset: 0, region: more[0]!.region });
    freed.close();
  });

  test('growth for a 64 MB allocation: max(2 × last, next power of two); the retired region is unlinked when its last lease is released', () => {
    const a = arena();
    const small = a.allocate(1000);
    const other = a.allocate(1000);
    const big = a.allocate(64_000_000);
    expect(big).toMatchObject({ offset: 0, region: { name: `${prefix.current}-n1`, size: 2 ** 26 } });
    const { bytes } = big.region!;
    bytes.fill(7, 0, 64_000_000);
    expect(bytes[63_999_999]).toBe(7);
    expect(filesWith(prefix.current)).toEqual([`${prefix.current}-n0`, `${prefix.current}-n1`]);
    a.release(other.lease);
    expect(filesWith(prefix.current)).toEqual([`${prefix.current}-n0`, `${prefix.current}-n1`]);
    a.release(small.lease); // n0's last lease
    expect(filesWith(prefix.current)).toEqual([`${prefix.current}-n1`]);
    // The next growth doubles the last region even for a small allocation.
    a.allocate(2 ** 26 - 64);
    expect(a.allocate(128).region).toMatchObject({ name: `${prefix.current}-n2`, size: 2 ** 27 });
    a.close();
  });

  test("with a growth size, the next region is Triton's: the last plus growth × (allocation / growth + 1)", () => {
    const a = new Arena(SHM_DIR, `${prefix.current}-n`, 4096, 1000);
    expect(a.allocate(5000).region).toMatchObject({ name: `${prefix.current}-n0`, size: 4096 + 6000 }); // the first too is grown
    expect(a.allocate(9000).region).toMatchObject({ name: `${prefix.current}-n1`, size: 10096 + 10000 });
    expect(a.allocate(64).region).toMatchObject({ name: `${prefix.current}-n1` });
    a.close();
  });

  test('a region retired with no live lease is unlinked at once; close() unlinks everything and later allocations throw', () => {
    const a = arena(4096);
    const only = a.allocate(4096);
    a.release(only.lease);
    a.allocate(8192); // too big for n0, which holds nothing: n0 goes at once
    expect(filesWith(prefix.current)).toEqual([`${prefix.current}-n1`]);
    a.allocate(100); // n1 is full: n2 (2 × 8192), and n1 is retired holding a lease
    expect(filesWith(prefix.current)).toEqual([`${prefix.current}-n1`, `${prefix.current}-n2`]);
    a.close();
    expect(filesWith(prefix.current)).toEqual([]);
    expect(() => a.allocate(1)).toThrow(/closed/);
    expect(a.release(3)).toBe(false);
  });

  test('bad sizes are RangeErrors', () => {
    const a = arena();
    expect(() => a.allocate(-1)).toThrow(RangeError);
    expect(() => a.allocate(1.5)).toThrow(RangeError);
    expect(() => new Arena(SHM_DIR, 'x', 0)).toThrow(RangeError);
    expect(() => new Arena(SHM_DIR, 'x', 4096, 0)).toThrow(RangeError);
    a.close();
  });
});

describe.skipIf(addonMissing !== undefined)('PeerRegions (the receiver side)', () => {
  const prefix = useShmPrefix();

  test('maps a region the first time a frame names it, unlinks the file at once, and sees the owner\'s writes', () => {
    const owner = new Arena(SHM_DIR, `${prefix.current}-n`);
    const peer = new PeerRegions(SHM_DIR);
    const { region, offset } = owner.allocate(4);
    region!.bytes.set([1, 2, 3, 4], offset);
    const view = peer.view(region!.name, offset, 4);
    expect(Array.from(view)).toEqual([1, 2, 3, 4]);
    expect(filesWith(prefix.current)).toEqual([]);
    const next = owner.allocate(4);
    region!.bytes.set([5, 6], next.offset);
    expect(Array.from(peer.view(region!.name, next.offset, 2))).toEqual([5, 6]); // the same mapping, not reopened
    view[0] = 42;
    expect(region!.bytes[offset]).toBe(42);
    owner.close();
  });

  test('keeps the newest two generations per owner; an older one is an error; owners are told apart by prefix and side', () => {
    const node = new Arena(SHM_DIR, `${prefix.current}-n`, 4096);
    const python = new Arena(SHM_DIR, `${prefix.current}-p`, 4096);
    const peer = new PeerRegions(SHM_DIR);
    const old = node.allocate(4096);
    old.region!.bytes[0] = 1;
    const fromOld = peer.view(old.region!.name, 0, 1);
    const fromPython = python.allocate(8);
    peer.view(fromPython.region!.name, 0, 8);
    const grown = node.allocate(64);
    expect(grown.region!.name).toBe(`${prefix.current}-n1`);
    grown.region!.bytes[0] = 2;
    expect(peer.view(grown.region!.name, 0, 1)[0]).toBe(2);
    // Two stub threads may send around a growth in either order: the one before the newest still maps.
    expect(peer.view(old.region!.name, 0, 1)[0]).toBe(1);
    const third = node.allocate(8192);
    expect(third.region!.name).toBe(`${prefix.current}-n2`);
    peer.view(third.region!.name, 0, 1);
    expect(() => peer.view(old.region!.name, 0, 1)).toThrow(/older than .*-n2, already mapped/);
    expect(fromOld[0]).toBe(1); // a view handed out earlier keeps its mapping
    expect(peer.view(fromPython.region!.name, 0, 8).byteLength).toBe(8); // python's p0 is still the newest of its owner
    expect(filesWith(prefix.current)).toEqual([]);
    node.release(old.lease);
    node.release(grown.lease);
    node.close();
    python.close();
  });

  test('zero bytes need no region; bad names and out-of-range views are errors; clear() forgets mappings', () => {
    const owner = new Arena(SHM_DIR, `${prefix.current}-n`, 4096);
    const peer = new PeerRegions(SHM_DIR);
    expect(peer.view('', 0, 0).byteLength).toBe(0);
    expect(() => peer.view('no-generation', 0, 1)).toThrow(/not a shared-memory region name/);
    const { region } = owner.allocate(64);
    expect(() => peer.view(region!.name, 4000, 100)).toThrow(/bytes 4000\.\.4100 lie outside shared-memory region .*-n0 of 4096 bytes/);
    peer.clear();
    // Its file was unlinked at the first sight, so a forgotten region cannot be mapped again.
    expect(() => peer.view(region!.name, 0, 1)).toThrow(/ENOENT/);
    owner.close();
  });
});
