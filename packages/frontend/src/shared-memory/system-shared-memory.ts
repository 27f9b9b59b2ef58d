import { closeSync, readSync, writeSync } from 'node:fs';
import { InferenceError } from '@tritium/core';
import { asCount, invalid } from '../wire-values.js';
import { currentSize, openRegionFile, type FileIdentity } from './region-file.js';
import { RequestRegions } from './request-regions.js';

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

/**
 * Key prefixes no client may register: this process's own regions (the Python backend
 * names its `tritium-<pid>-…`), which carry other requests' tensors, and the prefix
 * Triton reserves for its Python backend's.
 */
const RESERVED_KEY_PREFIXES = [`tritium-${process.pid}-`, 'triton_python_backend_shm_region_'];

/**
 * One registered region. It holds no file descriptor while idle: the first request that
 * uses it opens its file (checking that the key still names the file registered), the
 * requests using it at once share that descriptor, and the last one to end closes it.
 */
export class SharedMemoryRegion implements SharedMemoryRegionStatus {
  private fd: number | undefined;
  private users = 0;

  constructor(
    readonly name: string,
    readonly key: string,
    readonly offset: number,
    readonly byteSize: number,
    private readonly file: FileIdentity,
    private readonly whenIdle: (region: SharedMemoryRegion) => void,
  ) {}

  get inUse(): boolean {
    return this.users > 0;
  }

  /** One more request uses the region, until it calls release(). */
  acquire(): void {
    if (this.users === 0) this.fd = this.open();
    this.users++;
  }

  release(): void {
    if (--this.users > 0) return;
    closeSync(this.fd!);
    this.fd = undefined;
    this.whenIdle(this);
  }

  /** Throws unless `ref` lies inside the region, in Triton's words: its offset must be inside (even for no bytes), then its end. */
  check(ref: SharedMemoryRef): void {
    const detail = `(offset ${ref.offset}, byte_size ${ref.byteSize}, of its ${this.byteSize} bytes)`;
    if (asCount(ref.offset) === undefined || ref.offset >= this.byteSize) throw invalid(`Invalid offset for shared memory region: '${ref.region}' ${detail}`);
    if (asCount(ref.byteSize) === undefined || ref.offset + ref.byteSize > this.byteSize) {
      throw invalid(`Invalid offset + byte size for shared memory region: '${ref.region}' ${detail}`);
    }
  }

  /** A copy of the bytes at `ref` (checked), in a buffer of its own, so typed arrays over it are aligned. */
  read(ref: SharedMemoryRef): Uint8Array {
    const fd = this.descriptor(ref);
    const bytes = new Uint8Array(ref.byteSize);
    for (let done = 0; done < bytes.length; ) {
      const read = readSync(fd, bytes, done, bytes.length - done, this.offset + ref.offset + done);
      if (read === 0) throw this.truncated();
      done += read;
    }
    return bytes;
  }

  /** Writes `bytes` at `ref` (checked, and holding at least `bytes.length`). */
  write(ref: SharedMemoryRef, bytes: Uint8Array): void {
    const fd = this.descriptor(ref);
    for (let done = 0; done < bytes.length; ) {
      done += writeSync(fd, bytes, done, bytes.length - done, this.offset + ref.offset + done);
    }
  }

  /** The descriptor the requests using the region share, once `ref` is known to lie inside both the region and the file as it is now (so a write never grows it). */
  private descriptor(ref: SharedMemoryRef): number {
    const fd = this.fd!;
    this.check(ref);
    if (this.offset + ref.offset + ref.byteSize > currentSize(fd)) throw this.truncated();
    return fd;
  }

  private open(): number {
    const file = openRegionFile(this.key);
    if (file.dev !== this.file.dev || file.ino !== this.file.ino) {
      closeSync(file.fd);
      throw invalid(`shared memory region '${this.name}': key '${this.key}' now names another file than the one registered`);
    }
    return file.fd;
  }

  private truncated(): InferenceError {
    return invalid(`shared memory region '${this.name}': key '${this.key}' was truncated to fewer bytes than the region registered`);
  }
}

/**
 * Triton's system shared-memory extension: regions a client on the same host made with
 * shm_open, registered by name. Tensors move through the region's file in /dev/shm (one
 * copy each way, into or out of the page cache the client has mapped), so nothing here
 * needs a native addon. A file is opened only while requests use it, never through a
 * symbolic link, and only if it is still the regular file registered.
 */
export class SystemSharedMemory {
  private readonly regions = new Map<string, SharedMemoryRegion>();
  /** Regions unregistered while requests still use them: they keep their place (and descriptor) until those end. */
  private readonly draining = new Set<SharedMemoryRegion>();

  /** The regions that hold a place: every registered one, and those unregistered but still in use. */
  get held(): number {
    return this.regions.size + this.draining.size;
  }

  /** Registers a region, in Triton's order of checks and with its words (src/shared_memory_manager.cc, src/common.cc), any detail of ours after them. */
  register(name: string, key: string, offset: number, byteSize: number): void {
    if (!name) throw invalid('a shared-memory region needs a name');
    const unslashed = key.replace(/^\/+/, '');
    if (!unslashed) throw invalid(`cannot register shared memory region '${name}' - invalid shm key '${key}'`);
    const reserved = RESERVED_KEY_PREFIXES.find((prefix) => unslashed.startsWith(prefix));
    if (reserved) throw invalid(`cannot register shared memory region '${name}' with key '${key}' as the key contains the reserved prefix '${reserved}'`);
    if (!/^\/?[^/\0]+$/.test(key) || unslashed === '.' || unslashed === '..') {
      throw invalid(`cannot register shared memory region '${name}' - invalid shm key '${key}': not a POSIX shared-memory name (one '/' at most, at the start)`);
    }
    if (this.regions.has(name)) throw new InferenceError('ALREADY_EXISTS', `shared memory region '${name}' already in manager`);
    if (asCount(offset) === undefined || asCount(byteSize) === undefined) {
      throw invalid(`failed to register shared memory region '${name}': invalid args (offset and byte_size must be non-negative integers)`);
    }
    const file = openRegionFile(key);
    closeSync(file.fd);
    if (offset + byteSize > file.size) {
      throw invalid(`failed to register shared memory region '${name}': invalid args (offset ${offset} + byte_size ${byteSize} exceeds the ${file.size} bytes of key '${key}')`);
    }
    this.regions.set(name, new SharedMemoryRegion(name, key, offset, byteSize, file, (region) => this.draining.delete(region)));
  }

  /**
   * Unregisters one region, or every region when no name is given. Unknown names are not
   * an error, as in Triton. The name is free again at once; requests in flight that use
   * the region keep it until they end.
   */
  unregister(name?: string): void {
    for (const region of name === undefined ? [...this.regions.values()] : [this.regions.get(name)]) {
      if (!region) continue;
      this.regions.delete(region.name);
      if (region.inUse) this.draining.add(region);
    }
  }

  /** One region's status, or every region's. */
  status(name?: string): SharedMemoryRegionStatus[] {
    const named = name === undefined ? undefined : this.regions.get(name);
    if (name !== undefined && !named) throw new InferenceError('NOT_FOUND', `Unable to find system shared memory region: '${name}'`);
    return (named ? [named] : [...this.regions.values()]).map(({ name, key, offset, byteSize }) => ({ name, key, offset, byteSize }));
  }

  /** The region registered as `name`, for a request that names it. */
  region(name: string): SharedMemoryRegion {
    const region = this.regions.get(name);
    if (!region) throw new InferenceError('NOT_FOUND', `Unable to find shared memory region: '${name}'`);
    return region;
  }

  /**
   * The regions of one request, held from when it names them until release(). A BYTES
   * input may take up to `largestBytesInput` bytes from a region.
   */
  forRequest(largestBytesInput: number): RequestRegions {
    return new RequestRegions(this, largestBytesInput);
  }
}
