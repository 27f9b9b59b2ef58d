import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, test } from 'vitest';
import { loadSharedMemoryAddon } from '../src/native.js';
import { SharedRegion, removeRegions, sharedMemoryDirectory } from '../src/shared-region.js';
import { loadAddonFrom } from '../src/native.js';
import { SHM_DIR, addonMissing, filesWith, useShmPrefix } from './helpers.js';

describe('loading the addon', () => {
  test('a missing addon is an Error that says what is missing and how to build it', () => {
    // A package root outside node_modules is a checkout of this workspace: the hint is its build:native script.
    const root = join(tmpdir(), 'no-such-dir');
    const path = join(root, 'build', 'Release', 'shared_memory.node');
    expect(() => loadAddonFrom(path, root)).toThrow(
      `the shared-memory addon of @tritium/backend-python is not built (${path} does not exist): install cmake and a C++ compiler, then run \`pnpm --filter @tritium/backend-python build:native\``,
    );
  });

  test('a file that is not an addon says it does not load, and why', () => {
    const path = join(tmpdir(), `not-an-addon-${process.pid}.node`);
    writeFileSync(path, 'not a shared object');
    try {
      expect(() => loadAddonFrom(path)).toThrow(/is not built \(.*not-an-addon-\d+\.node does not load: .+\): install cmake/);
    } finally {
      removeRegions(tmpdir(), `not-an-addon-${process.pid}`);
    }
  });

  test('sharedMemoryDirectory is /dev/shm where it exists', () => {
    expect(sharedMemoryDirectory()).toBe(existsSync('/dev/shm') ? '/dev/shm' : tmpdir());
  });
});

describe.skipIf(addonMissing !== undefined)('the addon and SharedRegion', () => {
  const prefix = useShmPrefix();

  test('map() gives an ArrayBuffer, and two mappings of one file see each other\'s writes', () => {
    const { map } = loadSharedMemoryAddon();
    const path = join(SHM_DIR, `${prefix.current}-n0`);
    const first = openSync(path, 'wx+');
    writeFileSync(first, Buffer.alloc(8192));
    const second = openSync(path, 'r+');
    const a = new Uint8Array(map(first, 8192));
    const b = new Uint8Array(map(second, 8192));
    closeSync(first);
    closeSync(second);
    expect(a.byteLength).toBe(8192);
    a[0] = 11;
    b[8191] = 22;
    expect([b[0], a[8191]]).toEqual([11, 22]);
    expect(readFileSync(path).subarray(0, 1)[0]).toBe(11);
    removeRegions(SHM_DIR, prefix.current);
    a[100] = 33; // both mappings outlive the descriptors and the file
    expect(b[100]).toBe(33);
  });

  test('map() errors are exceptions with the errno text, and a length past the end is refused', () => {
    const { map } = loadSharedMemoryAddon();
    expect(() => map(987654, 4096)).toThrow(/^map: fstat failed: Bad file descriptor \(errno 9\)$/);
    const path = join(SHM_DIR, `${prefix.current}-n0`);
    const fd = openSync(path, 'wx+');
    try {
      writeFileSync(fd, Buffer.alloc(100));
      expect(() => map(fd, 4096)).toThrow('map: the file holds 100 bytes, fewer than the 4096 asked for');
      expect(() => map(fd, 0)).toThrow(RangeError);
      expect(() => map(-1, 10)).toThrow(RangeError);
      const readOnly = openSync(path, 'r');
      try {
        expect(() => map(readOnly, 100)).toThrow(/^map: mmap failed: Permission denied \(errno 13\)$/);
      } finally {
        closeSync(readOnly);
      }
    } finally {
      closeSync(fd);
      removeRegions(SHM_DIR, prefix.current);
    }
  });

  test('V8 counts a mapping as external memory, and collecting it unmaps the file', async () => {
    if (!existsSync('/proc/self/maps')) return;
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const name = `${prefix.current}-n0`;
    const mapped = () => readFileSync('/proc/self/maps', 'utf8').includes(name);
    const before = process.memoryUsage().external;
    let region: SharedRegion | undefined = SharedRegion.create(SHM_DIR, name, 64 << 20);
    expect(process.memoryUsage().external - before).toBeGreaterThanOrEqual(60 << 20);
    region.unlink();
    expect(mapped()).toBe(true);
    region = undefined;
    for (let i = 0; i < 50 && mapped(); i += 1) {
      gc();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(mapped()).toBe(false);
  });

  test('create() makes and maps a file of the size asked; open() maps it whole and unlinks it', () => {
    const name = `${prefix.current}-p3`;
    const owner = SharedRegion.create(SHM_DIR, name, 5000);
    expect(owner).toMatchObject({ name, size: 5000 });
    expect(filesWith(prefix.current)).toEqual([name]);
    owner.bytes.set([1, 2, 3], 4997);
    const receiver = SharedRegion.open(SHM_DIR, name);
    expect(receiver.size).toBe(5000);
    expect(filesWith(prefix.current)).toEqual([]);
    expect(Array.from(receiver.bytes.subarray(4997))).toEqual([1, 2, 3]);
    receiver.bytes[0] = 9;
    expect(owner.bytes[0]).toBe(9);
    owner.unlink(); // already gone: no error
    receiver.unlink();
  });

  test('create() refuses an existing file and leaves it be; open() of a missing file is ENOENT', () => {
    const name = `${prefix.current}-n0`;
    const first = SharedRegion.create(SHM_DIR, name, 4096);
    expect(() => SharedRegion.create(SHM_DIR, name, 4096)).toThrow(/EEXIST/);
    expect(filesWith(prefix.current)).toEqual([name]);
    expect(() => SharedRegion.create(SHM_DIR, `${prefix.current}-n1`, 0)).toThrow(RangeError);
    first.unlink();
    expect(() => SharedRegion.open(SHM_DIR, name)).toThrow(/ENOENT/);
  });

  test('removeRegions unlinks <dir>/<prefix>* and nothing else; a missing directory is no error', () => {
    for (const suffix of ['-n0', '-n1', '-p0']) SharedRegion.create(SHM_DIR, `${prefix.current}${suffix}`, 64);
    const other = SharedRegion.create(SHM_DIR, `${prefix.current}x-n0`, 64);
    removeRegions(SHM_DIR, `${prefix.current}-`);
    expect(filesWith(prefix.current)).toEqual([`${prefix.current}x-n0`]);
    other.unlink();
    removeRegions(join(SHM_DIR, `${prefix.current}-no-such-dir`), 'x');
  });
});
