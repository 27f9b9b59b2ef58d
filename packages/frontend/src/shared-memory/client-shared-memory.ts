import { InferenceError, type InferenceServer } from '@tritium/core';
import { integerOption } from '../frontend-options.js';
import type { RequestRegions } from './request-regions.js';
import { SystemSharedMemory, type SharedMemoryRegionStatus } from './system-shared-memory.js';

/** A frontend's shared-memory options. */
export interface SharedMemoryOptions {
  /**
   * Triton's --allow-client-shm: whether clients may register and unregister shared-memory
   * regions (system, and CUDA where there were any). Default false, as Triton.
   */
  readonly allowClientSharedMemory?: boolean;
  /**
   * The most system shared-memory regions the server holds at once, counting those
   * unregistered while a request still uses them; a registration beyond it is refused
   * with RESOURCE_EXHAUSTED. Default 1024. Triton has no such limit.
   */
  readonly maxSharedMemoryRegions?: number;
}

export const DEFAULT_MAX_SHARED_MEMORY_REGIONS = 1024;

/** Triton's words (src/common.h) for a registration on a server that does not allow them. */
const CLIENT_SHM_DISABLED = "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable.";

/**
 * Why a CUDA region cannot be registered: there is no GPU memory here. In the words of
 * Triton's GPU build for a handle it cannot open, which clients and Triton's QA match
 * (its CPU build's "GPUs not supported" follows them).
 */
export function cudaRegisterRefusal(name: string): InferenceError {
  return new InferenceError('INVALID_ARG', `failed to register shared memory region '${name}': invalid args (CUDA shared memory: GPUs not supported)`);
}

/** The server's registry as one frontend serves it, under that frontend's options. */
export class ClientSharedMemory {
  constructor(
    private readonly memory: SystemSharedMemory,
    private readonly allowed: boolean,
    private readonly maxRegions: number,
    /** The frontend's largest request: no BYTES input taken from a region may be larger. */
    private readonly largestBytesInput: number,
  ) {}

  /** As Triton, registering and unregistering (system or CUDA) need --allow-client-shm; status does not. */
  checkAllowed(): void {
    if (!this.allowed) throw new InferenceError('UNSUPPORTED', CLIENT_SHM_DISABLED);
  }

  register(name: string, key: string, offset: number, byteSize: number): void {
    this.checkAllowed();
    if (this.memory.held >= this.maxRegions) {
      throw new InferenceError(
        'RESOURCE_EXHAUSTED',
        `unable to register shared memory region '${name}': the server holds ${this.memory.held} regions, its limit (maxSharedMemoryRegions ${this.maxRegions}); unregister some first`,
      );
    }
    this.memory.register(name, key, offset, byteSize);
  }

  unregister(name?: string): void {
    this.checkAllowed();
    this.memory.unregister(name);
  }

  status(name?: string): SharedMemoryRegionStatus[] {
    return this.memory.status(name);
  }

  /** The regions of one request, to release() once its response is written. */
  forRequest(): RequestRegions {
    return this.memory.forRequest(this.largestBytesInput);
  }
}

/** Each server's regions: one registry that every frontend of that server shares, as in Triton. */
const registries = new WeakMap<InferenceServer, { memory: SystemSharedMemory; users: number }>();

/**
 * The server's shared-memory registry for a frontend that opens (`frontend` names it in
 * messages about its options); `release` when the frontend closes: the last one to close
 * unregisters every region.
 */
export function attachSharedMemory(
  server: InferenceServer,
  frontend: string,
  options: SharedMemoryOptions,
  largestBytesInput: number,
): { memory: ClientSharedMemory; release(): void } {
  const maxRegions = integerOption(frontend, 'maxSharedMemoryRegions', options.maxSharedMemoryRegions ?? DEFAULT_MAX_SHARED_MEMORY_REGIONS, 1, 2 ** 31 - 1);
  let entry = registries.get(server);
  if (!entry) registries.set(server, (entry = { memory: new SystemSharedMemory(), users: 0 }));
  entry.users++;
  const held = entry;
  let released = false;
  return {
    memory: new ClientSharedMemory(held.memory, options.allowClientSharedMemory ?? false, maxRegions, largestBytesInput),
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
