import { invalid } from '../wire-values.js';
import type { SharedMemoryRef, SharedMemoryRegion, SystemSharedMemory } from './system-shared-memory.js';

/**
 * The regions one inference request uses, each looked up by name once, when the request
 * is read, and held until its response is written. Unregistering a region meanwhile (and
 * registering its name again, on another key) neither fails the request nor moves its
 * outputs: as Triton, a region stays mapped while a request uses it.
 */
export class RequestRegions {
  /** Made when the request first names a region: most requests name none. */
  private held: Map<string, SharedMemoryRegion> | undefined;

  constructor(
    private readonly memory: SystemSharedMemory,
    /** The most bytes a BYTES input may take from a region (its size is not fixed by its shape). */
    readonly largestBytesInput: number,
  ) {}

  /** Holds the region `ref` names for the rest of the request, and checks that `ref` lies inside it. */
  hold(ref: SharedMemoryRef): void {
    this.region(ref).check(ref);
  }

  /** A copy of the bytes at `ref`. */
  read(ref: SharedMemoryRef): Uint8Array {
    return this.region(ref).read(ref);
  }

  /** Writes `bytes` at `ref`, which must have room for them. */
  write(ref: SharedMemoryRef, bytes: Uint8Array): void {
    if (bytes.length > ref.byteSize) {
      throw invalid(`shared memory region '${ref.region}': the output needs ${bytes.length} bytes, only ${ref.byteSize} were given`);
    }
    this.region(ref).write(ref, bytes);
  }

  /** Lets go of every region held, once the request has ended. */
  release(): void {
    if (!this.held) return;
    for (const region of this.held.values()) region.release();
    this.held.clear();
  }

  private region(ref: SharedMemoryRef): SharedMemoryRegion {
    let region = this.held?.get(ref.region);
    if (!region) {
      region = this.memory.region(ref.region);
      region.acquire();
      (this.held ??= new Map()).set(ref.region, region);
    }
    return region;
  }
}
