import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { SystemSharedMemory } from '../src/shared-memory/system-shared-memory.js';

const keys: string[] = [];
const memories: SystemSharedMemory[] = [];

/** A region as shm_open would make it: a file of `size` bytes in /dev/shm. */
function shmFile(size: number): string {
  const key = `/tritium-test-${randomUUID()}`;
  writeFileSync(`/dev/shm${key}`, new Uint8Array(size));
  keys.push(key);
  return key;
}

function registry(): SystemSharedMemory {
  const memory = new SystemSharedMemory();
  memories.push(memory);
  return memory;
}

afterEach(() => {
  for (const memory of memories.splice(0)) memory.unregister();
  for (const key of keys.splice(0)) rmSync(`/dev/shm${key}`, { force: true });
});

describe('SystemSharedMemory', () => {
  it('reads and writes through a registered region at its offset', () => {
    const memory = registry();
    const key = shmFile(64);
    memory.register('r', key, 16, 32);
    memory.write({ region: 'r', offset: 4, byteSize: 8 }, Uint8Array.from([1, 2, 3]));
    expect(Array.from(memory.read({ region: 'r', offset: 4, byteSize: 4 }))).toEqual([1, 2, 3, 0]);
    const other = registry();
    other.register('whole', key, 0, 64);
    expect(Array.from(other.read({ region: 'whole', offset: 20, byteSize: 3 }))).toEqual([1, 2, 3]);
    expect(memory.status()).toEqual([{ name: 'r', key, offset: 16, byteSize: 32 }]);
  });

  it('names what is wrong with a registration', () => {
    const memory = registry();
    const key = shmFile(8);
    expect(() => memory.register('r', '/no-such-key-tritium', 0, 8)).toThrow(/unable to open shared memory region 'r' \(key '\/no-such-key-tritium'\)/);
    expect(() => memory.register('r', '/../etc/passwd', 0, 8)).toThrow(/is not a POSIX shared-memory name/);
    expect(() => memory.register('r', key, 4, 8)).toThrow(/offset 4 \+ byte_size 8 exceeds the 8 bytes of key/);
    memory.register('r', key, 0, 8);
    expect(() => memory.register('r', key, 0, 8)).toThrow(expect.objectContaining({ code: 'ALREADY_EXISTS' }));
  });

  it('refuses reads and writes outside the region and after unregister', () => {
    const memory = registry();
    memory.register('r', shmFile(8), 0, 8);
    expect(() => memory.read({ region: 'r', offset: 4, byteSize: 8 })).toThrow(/offset 4 \+ byte_size 8 is outside its 8 bytes/);
    expect(() => memory.write({ region: 'r', offset: 0, byteSize: 2 }, new Uint8Array(4))).toThrow(/needs 4 bytes, only 2 were given/);
    memory.unregister('r');
    memory.unregister('never-registered');
    expect(() => memory.read({ region: 'r', offset: 0, byteSize: 1 })).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
    expect(() => memory.status('r')).toThrow(/unable to find system shared memory region: 'r'/);
  });
});
