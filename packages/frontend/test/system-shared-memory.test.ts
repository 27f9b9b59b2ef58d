import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync, ftruncateSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InferenceServer } from '@tritium/core';
import { afterEach, describe, expect, it } from 'vitest';
import { attachSharedMemory } from '../src/shared-memory/client-shared-memory.js';
import type { RequestRegions } from '../src/shared-memory/request-regions.js';
import { sharedMemoryInput } from '../src/shared-memory/shared-memory-tensors.js';
import { SystemSharedMemory } from '../src/shared-memory/system-shared-memory.js';

const keys: string[] = [];
const memories: SystemSharedMemory[] = [];
const requests: RequestRegions[] = [];
const cleanups: Array<() => void> = [];

/** A new key in /dev/shm (removed after the test), and its path. */
function newKey(): { key: string; path: string } {
  const key = `/tritium-test-${randomUUID()}`;
  keys.push(key);
  return { key, path: `/dev/shm${key}` };
}

/** A region as shm_open would make it: a file of `size` bytes in /dev/shm. */
function shmFile(size: number, bytes?: Uint8Array): string {
  const { key, path } = newKey();
  const content = new Uint8Array(size);
  if (bytes) content.set(bytes);
  writeFileSync(path, content);
  return key;
}

/** A file outside /dev/shm that a client would like the server to read or overwrite. */
function victimFile(content: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'tritium-shm-victim-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'secret');
  writeFileSync(path, content);
  return path;
}

function registry(): SystemSharedMemory {
  const memory = new SystemSharedMemory();
  memories.push(memory);
  return memory;
}

function request(memory: SystemSharedMemory, largestBytesInput = 1024): RequestRegions {
  const regions = memory.forRequest(largestBytesInput);
  requests.push(regions);
  return regions;
}

const openDescriptors = () => readdirSync('/proc/self/fd').length;

afterEach(() => {
  for (const regions of requests.splice(0)) regions.release();
  for (const memory of memories.splice(0)) memory.unregister();
  for (const key of keys.splice(0)) rmSync(`/dev/shm${key}`, { force: true });
  for (const cleanup of cleanups.splice(0)) cleanup();
});

describe('SystemSharedMemory', () => {
  it('reads and writes through a registered region at its offset', () => {
    const memory = registry();
    const key = shmFile(64);
    memory.register('r', key, 16, 32);
    const regions = request(memory);
    regions.write({ region: 'r', offset: 4, byteSize: 8 }, Uint8Array.from([1, 2, 3]));
    expect(Array.from(regions.read({ region: 'r', offset: 4, byteSize: 4 }))).toEqual([1, 2, 3, 0]);
    const other = registry();
    other.register('whole', key, 0, 64);
    expect(Array.from(request(other).read({ region: 'whole', offset: 20, byteSize: 3 }))).toEqual([1, 2, 3]);
    expect(memory.status()).toEqual([{ name: 'r', key, offset: 16, byteSize: 32 }]);
  });

  it("names what is wrong with a registration, in Triton's words and codes, any detail of ours after them", () => {
    const memory = registry();
    const key = shmFile(8);
    const refusal = (code: string, message: RegExp) => expect.objectContaining({ code, message: expect.stringMatching(message) });
    expect(() => memory.register('r', '/no-such-key-tritium', 0, 8)).toThrow(refusal('INTERNAL', /^Unable to open shared memory region: '\/no-such-key-tritium': ENOENT/));
    for (const slashes of ['/', '///']) {
      expect(() => memory.register('r', slashes, 0, 8)).toThrow(refusal('INVALID_ARG', new RegExp(`^cannot register shared memory region 'r' - invalid shm key '${slashes}'$`)));
    }
    expect(() => memory.register('r', '/../etc/passwd', 0, 8)).toThrow(refusal('INVALID_ARG', /^cannot register shared memory region 'r' - invalid shm key '\/..\/etc\/passwd': not a POSIX shared-memory name/));
    expect(() => memory.register('r', key, 4, 8)).toThrow(refusal('INVALID_ARG', /^failed to register shared memory region 'r': invalid args \(offset 4 \+ byte_size 8 exceeds the 8 bytes of key/));
    // The prefix Triton reserves, whatever the slashes before it, and the Python backend's regions of this process.
    for (const reserved of ['triton_python_backend_shm_region__k', '/triton_python_backend_shm_region__k', '///triton_python_backend_shm_region__k']) {
      expect(() => memory.register('r', reserved, 0, 8)).toThrow(
        refusal('INVALID_ARG', new RegExp(`^cannot register shared memory region 'r' with key '${reserved}' as the key contains the reserved prefix 'triton_python_backend_shm_region_'$`)),
      );
    }
    expect(() => memory.register('r', `/tritium-${process.pid}-abc-n1`, 0, 8)).toThrow(/as the key contains the reserved prefix 'tritium-\d+-'/);
    memory.register('r', key, 0, 8);
    expect(() => memory.register('r', key, 0, 8)).toThrow(refusal('ALREADY_EXISTS', /^shared memory region 'r' already in manager$/));
  });

  it('refuses reads and writes outside the region and after unregister', () => {
    const memory = registry();
    memory.register('r', shmFile(8), 0, 8);
    const regions = request(memory);
    expect(() => regions.read({ region: 'r', offset: 4, byteSize: 8 })).toThrow(/^Invalid offset \+ byte size for shared memory region: 'r' \(offset 4, byte_size 8, of its 8 bytes\)$/);
    // As Triton: the offset must lie inside the region, even for no bytes.
    expect(() => regions.read({ region: 'r', offset: 8, byteSize: 0 })).toThrow(/^Invalid offset for shared memory region: 'r'/);
    expect(() => regions.write({ region: 'r', offset: 0, byteSize: 2 }, new Uint8Array(4))).toThrow(/needs 4 bytes, only 2 were given/);
    memory.unregister('r');
    memory.unregister('never-registered');
    expect(() => request(memory).read({ region: 'r', offset: 0, byteSize: 1 })).toThrow(expect.objectContaining({ code: 'NOT_FOUND', message: "Unable to find shared memory region: 'r'" }));
    expect(() => memory.status('r')).toThrow(expect.objectContaining({ code: 'NOT_FOUND', message: "Unable to find system shared memory region: 'r'" }));
  });

  it('refuses a symbolic link in /dev/shm, reading and writing nothing through it', () => {
    const memory = registry();
    const secret = victimFile('root:x:0:0');
    const { key, path } = newKey();
    symlinkSync(secret, path);
    expect(() => memory.register('r', key, 0, 4)).toThrow(/^Unable to open shared memory region: '.*': it is a symbolic link$/);
    expect(memory.status()).toEqual([]);
    expect(readFileSync(secret, 'utf8')).toBe('root:x:0:0');
  });

  it('refuses a key that became a symbolic link, or another file, after it was registered', () => {
    const memory = registry();
    const secret = victimFile('root:x:0:0');
    const { key, path } = newKey();
    writeFileSync(path, new Uint8Array(10));
    memory.register('r', key, 0, 10);
    rmSync(path);
    symlinkSync(secret, path);
    const ref = { region: 'r', offset: 0, byteSize: 4 };
    expect(() => request(memory).read(ref)).toThrow(/it is a symbolic link/);
    expect(() => request(memory).write(ref, Uint8Array.from([1, 2, 3, 4]))).toThrow(/it is a symbolic link/);
    expect(readFileSync(secret, 'utf8')).toBe('root:x:0:0');
    rmSync(path);
    writeFileSync(path, new Uint8Array(10));
    expect(() => request(memory).read(ref)).toThrow(/key '.*' now names another file than the one registered/);
  });

  it('refuses a FIFO without waiting for a writer', () => {
    const memory = registry();
    const { key, path } = newKey();
    execFileSync('mkfifo', [path]);
    expect(() => memory.register('r', key, 0, 0)).toThrow(/it is not a regular file/);
  });

  it('holds no file descriptor for a registered region', () => {
    const memory = registry();
    const key = shmFile(8);
    const before = openDescriptors();
    for (let i = 0; i < 200; i++) memory.register(`r${i}`, key, 0, 8);
    expect(openDescriptors()).toBe(before);
    // A request opens a region's file once, however often it uses it, and closes it when it ends.
    const regions = request(memory);
    for (let i = 0; i < 3; i++) regions.read({ region: 'r0', offset: 0, byteSize: 8 });
    expect(openDescriptors()).toBe(before + 1);
    regions.release();
    expect(openDescriptors()).toBe(before);
  });

  it('refuses to read or write beyond the end of a file truncated after registration', () => {
    const memory = registry();
    const key = shmFile(16);
    memory.register('r', key, 0, 16);
    truncateSync(`/dev/shm${key}`, 4);
    const regions = request(memory);
    expect(() => regions.read({ region: 'r', offset: 0, byteSize: 8 })).toThrow(/was truncated/);
    expect(() => regions.write({ region: 'r', offset: 8, byteSize: 8 }, new Uint8Array(8))).toThrow(/was truncated/);
    expect(statSync(`/dev/shm${key}`).size).toBe(4);
  });

  it('keeps the region a request holds when it is unregistered, and its name registered again elsewhere, meanwhile', () => {
    const memory = registry();
    const first = shmFile(8);
    const second = shmFile(8);
    memory.register('out', first, 0, 8);
    const regions = request(memory);
    const ref = { region: 'out', offset: 0, byteSize: 4 };
    regions.hold(ref);
    memory.unregister('out');
    memory.register('out', second, 0, 8);
    expect(memory.held).toBe(2);
    regions.write(ref, Uint8Array.from([7, 7, 7, 7]));
    expect(Array.from(readFileSync(`/dev/shm${first}`).subarray(0, 4))).toEqual([7, 7, 7, 7]);
    expect(Array.from(readFileSync(`/dev/shm${second}`))).toEqual(new Array(8).fill(0));
    regions.release();
    expect(memory.held).toBe(1);
  });
});

describe('the registry as a frontend serves it', () => {
  const server = () => ({}) as InferenceServer;

  it('refuses registering and unregistering unless client shared memory is allowed, as Triton by default', () => {
    const { memory, release } = attachSharedMemory(server(), 'test frontend', {}, 1024);
    cleanups.push(release);
    const disabled = "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable.";
    expect(() => memory.register('r', shmFile(8), 0, 8)).toThrow(expect.objectContaining({ code: 'UNSUPPORTED', message: disabled }));
    expect(() => memory.unregister('r')).toThrow(disabled);
    expect(memory.status()).toEqual([]);
  });

  it('holds at most maxSharedMemoryRegions regions, counting those unregistered while a request uses them', () => {
    const { memory, release } = attachSharedMemory(server(), 'test frontend', { allowClientSharedMemory: true, maxSharedMemoryRegions: 3 }, 1024);
    cleanups.push(release);
    const key = shmFile(8);
    for (const name of ['a', 'b', 'c']) memory.register(name, key, 0, 8);
    expect(() => memory.register('d', key, 0, 8)).toThrow(
      expect.objectContaining({ code: 'RESOURCE_EXHAUSTED', message: expect.stringContaining('the server holds 3 regions, its limit (maxSharedMemoryRegions 3)') }),
    );
    const regions = memory.forRequest();
    cleanups.push(() => regions.release());
    regions.hold({ region: 'a', offset: 0, byteSize: 8 });
    memory.unregister('a');
    expect(() => memory.register('d', key, 0, 8)).toThrow(/its limit/);
    regions.release();
    memory.register('d', key, 0, 8);
    expect(() => attachSharedMemory(server(), 'test frontend', { maxSharedMemoryRegions: 0 }, 1024)).toThrow('test frontend option `maxSharedMemoryRegions` must be an integer from 1');
  });
});

describe('sharedMemoryInput', () => {
  /** A sparse file of `size` bytes: it costs no memory unless read. */
  function sparseFile(size: number): string {
    const { key, path } = newKey();
    const fd = openSync(path, 'w');
    ftruncateSync(fd, size);
    closeSync(fd);
    return key;
  }

  it('checks the byte size against the datatype and shape before reading anything', () => {
    const memory = registry();
    const gib = 2 ** 30;
    memory.register('big', sparseFile(gib), 0, gib);
    const regions = request(memory, 64 * 1024 * 1024);
    const region = { shared_memory_region: 'big', shared_memory_byte_size: gib };
    const rss = process.memoryUsage().rss;
    const started = performance.now();
    expect(() => sharedMemoryInput(regions, 'INPUT0', 'FP32', [4], region)).toThrow(
      "input 'INPUT0': shared_memory_byte_size 1073741824 does not match FP32 of shape [4], which needs 16 bytes",
    );
    expect(() => sharedMemoryInput(regions, 'TEXT', 'BYTES', [1], region)).toThrow(
      "input 'TEXT': shared_memory_byte_size 1073741824 is more than the 67108864 bytes a BYTES input may take from shared memory",
    );
    expect(() => sharedMemoryInput(regions, 'TEXT', 'BYTES', [4], { shared_memory_region: 'big', shared_memory_byte_size: 15 })).toThrow(/is too small for BYTES of shape \[4\]/);
    // Reading the GiB would show in RSS; the time bound is loose for a loaded machine.
    expect(performance.now() - started).toBeLessThan(500);
    expect(process.memoryUsage().rss - rss).toBeLessThan(32 * 1024 * 1024);
    expect(sharedMemoryInput(regions, 'INPUT0', 'FP32', [4], { shared_memory_region: 'big', shared_memory_byte_size: 16 })).toEqual({
      datatype: 'FP32',
      shape: [4],
      data: new Float32Array(4),
    });
  });
});
