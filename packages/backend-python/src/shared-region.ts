import { accessSync, closeSync, constants, fstatSync, ftruncateSync, openSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSharedMemoryAddon } from './native.js';

/**
 * One shared-memory file mapped read/write into this process. The mapping lives as long
 * as `bytes` (or any view of its buffer) is reachable: it is unmapped by the garbage
 * collector, never by hand, so no view can outlive its memory. The descriptor is closed
 * as soon as the file is mapped.
 */
export class SharedRegion {
  private constructor(
    /** The file's name in its directory, as frames name it (`<prefix>-n<gen>`). */
    readonly name: string,
    /** Where the file is (or was, once unlinked). */
    readonly path: string,
    readonly bytes: Uint8Array,
  ) {}

  get size(): number {
    return this.bytes.byteLength;
  }

  /** Creates `<dir>/<name>` (it must not exist) of `size` bytes and maps it. */
  static create(dir: string, name: string, size: number): SharedRegion {
    if (!Number.isSafeInteger(size) || size <= 0) throw new RangeError(`a shared-memory region needs a positive size, not ${size}`);
    const addon = loadSharedMemoryAddon();
    const path = join(dir, name);
    const fd = openSync(path, 'wx+', 0o600);
    try {
      ftruncateSync(fd, size);
      addon.reserve(fd, size);
      return new SharedRegion(name, path, new Uint8Array(addon.map(fd, size)));
    } catch (error) {
      unlinkQuietly(path);
      throw error;
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Maps the existing `<dir>/<name>` whole (its size from fstat), then unlinks it as a
   * receiver does: both sides' mappings stay valid and nothing is left behind if either
   * side dies later.
   */
  static open(dir: string, name: string): SharedRegion {
    const addon = loadSharedMemoryAddon();
    const path = join(dir, name);
    const fd = openSync(path, 'r+');
    try {
      const { size } = fstatSync(fd);
      if (size === 0) throw new Error(`shared-memory region ${path} is empty`);
      const region = new SharedRegion(name, path, new Uint8Array(addon.map(fd, size)));
      unlinkQuietly(path);
      return region;
    } finally {
      closeSync(fd);
    }
  }

  /** Removes the file (the mapping stays); a file already gone is no error. */
  unlink(): void {
    unlinkQuietly(this.path);
  }
}

/** Unlinks every `<dir>/<prefix>*` (what a side does when its peer dies); races are ignored. */
export function removeRegions(dir: string, prefix: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (error) {
    if (isCode(error, 'ENOENT')) return;
    throw error;
  }
  for (const name of names) if (name.startsWith(prefix)) unlinkQuietly(join(dir, name));
}

/** `/dev/shm` where it exists and is writable (memory-backed on Linux), else the temp directory. */
export function sharedMemoryDirectory(): string {
  try {
    if (statSync('/dev/shm').isDirectory()) {
      accessSync('/dev/shm', constants.W_OK);
      return '/dev/shm';
    }
  } catch {
    // No /dev/shm (macOS) or not writable: fall through.
  }
  return tmpdir();
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if (!isCode(error, 'ENOENT')) throw error;
  }
}

function isCode(error: unknown, code: string): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === code;
}
