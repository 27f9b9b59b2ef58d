import { afterEach, describe, expect, test, vi } from 'vitest';
import { BufferShelf } from '../src/buffer-shelf.mjs';

describe('the buffer shelf of the execution pool', () => {
  afterEach(() => vi.useRealTimers());

  test('hands out power-of-two sizes from the smallest up, and reuses a given-back buffer of the size', () => {
    const made: number[] = [];
    const shelf = new BufferShelf((size) => (made.push(size), new ArrayBuffer(size)), 1024);
    const first = shelf.take(10);
    expect(first.byteLength).toBe(1024);
    expect(shelf.take(1025).byteLength).toBe(2048);
    shelf.give(first);
    expect(shelf.take(1000)).toBe(first);
    // Taken again: not on the shelf any more.
    expect(shelf.take(1000)).not.toBe(first);
    expect(made).toEqual([1024, 2048, 1024]);
  });

  test('keeps two buffers per size, and skips one that was transferred away', () => {
    const shelf = new BufferShelf((size) => new ArrayBuffer(size));
    const buffers = [shelf.take(64), shelf.take(64), shelf.take(64)];
    for (const buffer of buffers) shelf.give(buffer);
    expect([shelf.take(64), shelf.take(64)]).toEqual(expect.arrayContaining([buffers[0], buffers[1]]));
    expect(shelf.take(64)).not.toBe(buffers[2]);
    const sent = shelf.take(128);
    structuredClone(sent, { transfer: [sent] });
    shelf.give(sent);
    expect(shelf.take(128).byteLength).toBe(128);
  });

  test('drops a large buffer left unused for two seconds, and keeps one that is in use', () => {
    vi.useFakeTimers();
    const shelf = new BufferShelf((size) => new ArrayBuffer(size));
    const large = shelf.take(16 * 2 ** 20);
    shelf.give(large);
    vi.advanceTimersByTime(1500);
    expect(shelf.take(16 * 2 ** 20)).toBe(large);
    shelf.give(large);
    vi.advanceTimersByTime(1500);
    // Given back 1.5 s ago: the first timer was cleared when it was taken.
    expect(shelf.take(16 * 2 ** 20)).toBe(large);
    shelf.give(large);
    vi.advanceTimersByTime(2001);
    expect(shelf.take(16 * 2 ** 20)).not.toBe(large);
    // Small buffers stay however long they wait.
    const small = shelf.take(1024);
    shelf.give(small);
    vi.advanceTimersByTime(60_000);
    expect(shelf.take(1024)).toBe(small);
  });
});
