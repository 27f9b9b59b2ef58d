import { closeSync, fstatSync, openSync, readSync, writeSync } from 'node:fs';
import { InferenceError, type InferenceServer } from '@tritium/core';
import { asCount, invalid } from '../wire-values.js';

/** Where a tensor lies in a registered region: Triton's `shared_memory_region/offset/byte_size` parameters. */
export interface SharedMemoryRef {
  readonly region: string;
  /** From the start of the registered region (which itself starts `offset` bytes into its key). */
  readonly offset: number;
  readonly byteSize: number;
}

/** One registered region, as the status call reports it. */
export interface SharedMemoryRegionStatus {
  readonly name: string;
  readonly key: string;
  readonly offset: number;
  readonly byteSize: number;
}

interface Region extends SharedMemoryRegionStatus {
  readonly fd: number;
}

/**
 * Triton's system shared-memory extension: regions a client on the same host made with
 * shm_open, registered by name. Tensors move through the region's file in /dev/shm
 * (one copy each way, into or out of the page cache the client has mapped), so no
 * mapping outlives an unregister and nothing here needs a native addon.
 */
export class SystemSharedMemory {
  private readonly regions = new Map<string, Region>();

  register(name: string, key: string, offset: number, byteSize: number): void {
    if (!name) throw invalid('a shared-memory region needs a name');
    if (this.regions.has(name)) {
      throw new InferenceError('ALREADY_EXISTS', `shared memory region '${name}' is already registered`);
    }
    if (!/^\/?[^/\0]+$/.test(key) || key === '/.' || key === '/..' || key === '.' || key === '..') {
      throw invalid(`shared memory key '${key}' is not a POSIX shared-memory name (one '/' at most, at the start)`);
    }
    if (asCount(offset) === undefined || asCount(byteSize) === undefined) {
      throw invalid(`shared memory region '${name}': offset and byte_size must be non-negative integers`);
    }
    let fd: number;
    try {
      fd = openSync(`/dev/shm/${key.replace(/^\//, '')}`, 'r+');
    } catch (error) {
      throw invalid(`unable to open shared memory region '${name}' (key '${key}'): ${(error as Error).message}`);
    }
    const size = fstatSync(fd).size;
    if (offset + byteSize > size) {
      closeSync(fd);
      throw invalid(`shared memory region '${name}': offset ${offset} + byte_size ${byteSize} exceeds the ${size} bytes of key '${key}'`);
    }
    this.regions.set(name, { name, key, offset, byteSize, fd });
  }

  /** Unregisters one region, or every region when no name is given. Unknown names are not an error, as in Triton. */
  unregister(name?: string): void {
    for (const region of name === undefined ? [...this.regions.values()] : [this.regions.get(name)]) {
      if (!region) continue;
      this.regions.delete(region.name);
      closeSync(region.fd);
    }
  }

  /** One region's status, or every region's. */
  status(name?: string): SharedMemoryRegionStatus[] {
    const regions = name === undefined ? [...this.regions.values()] : [this.region(name)];
    return regions.map(({ name, key, offset, byteSize }) => ({ name, key, offset, byteSize }));
  }

  /** A copy of the bytes at `ref`, in a buffer of its own (so typed arrays over it are aligned). */
  read(ref: SharedMemoryRef): Uint8Array {
    const region = this.within(ref);
    const bytes = new Uint8Array(ref.byteSize);
    for (let done = 0; done < bytes.length; ) {
      const read = readSync(region.fd, bytes, done, bytes.length - done, region.offset + ref.offset + done);
      if (read === 0) throw invalid(`shared memory region '${ref.region}' was truncated under the request`);
      done += read;
    }
    return bytes;
  }

  /** Writes `bytes` at `ref`, which must have room for them. */
  write(ref: SharedMemoryRef, bytes: Uint8Array): void {
    if (bytes.length > ref.byteSize) {
      throw invalid(`shared memory region '${ref.region}': the output needs ${bytes.length} bytes, only ${ref.byteSize} were given`);
    }
    const region = this.within(ref);
    for (let done = 0; done < bytes.length; ) {
      done += writeSync(region.fd, bytes, done, bytes.length - done, region.offset + ref.offset + done);
    }
  }

  private region(name: string): Region {
    const region = this.regions.get(name);
    if (!region) throw new InferenceError('NOT_FOUND', `unable to find system shared memory region: '${name}'`);
    return region;
  }

  private within(ref: SharedMemoryRef): Region {
    const region = this.region(ref.region);
    if (asCount(ref.offset) === undefined || asCount(ref.byteSize) === undefined || ref.offset + ref.byteSize > region.byteSize) {
      throw invalid(`shared memory region '${ref.region}': offset ${ref.offset} + byte_size ${ref.byteSize} is outside its ${region.byteSize} bytes`);
    }
    return region;
  }
}

/** Each server's regions: one registry that every frontend of that server shares, as in Triton. */
const registries = new WeakMap<InferenceServer, { memory: SystemSharedMemory; users: number }>();

/**
 * The server's shared-memory registry for a frontend that opens; `release` when the
 * frontend closes: the last one to close unregisters every region.
 */
export function attachSharedMemory(server: InferenceServer): { memory: SystemSharedMemory; release(): void } {
  let entry = registries.get(server);
  if (!entry) registries.set(server, (entry = { memory: new SystemSharedMemory(), users: 0 }));
  entry.users++;
  const held = entry;
  let released = false;
  return {
    memory: held.memory,
    release() {
      if (released) return;
      released = true;
      if (--held.users === 0) {
        held.memory.unregister();
        registries.delete(server);
      }
    },
  };
}
