import { SharedRegion } from './shared-region.js';

const GENERATION = /^(.*-[np])(\d+)$/;

/**
 * The receiver's side of PROTOCOL.md's shared memory: a region is mapped the first time a
 * frame names it and its file unlinked at once; only the newest generation of each owner
 * (`<prefix>-n<gen>` / `<prefix>-p<gen>`) is kept, and the one before it: frames name an
 * owner's regions in increasing generations, except that two threads of the stub may
 * allocate just before and after a growth and send in the other order. Views handed out
 * keep their mapping alive on their own.
 */
export class PeerRegions {
  /** Per owner, its newest mapped region and the one before it. */
  private readonly newest = new Map<string, Array<{ generation: number; region: SharedRegion }>>();

  constructor(readonly dir: string) {}

  /** The bytes a tensor reference names (a view into the mapping, not a copy). */
  view(regionName: string, offset: number, byteLength: number): Uint8Array {
    if (byteLength === 0) return new Uint8Array(0);
    const region = this.region(regionName);
    if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(byteLength) || offset < 0 || byteLength < 0 || offset + byteLength > region.size) {
      throw new RangeError(`bytes ${offset}..${offset + byteLength} lie outside shared-memory region ${regionName} of ${region.size} bytes`);
    }
    return region.bytes.subarray(offset, offset + byteLength);
  }

  /** Forgets every mapping (their files are unlinked already). */
  clear(): void {
    this.newest.clear();
  }

  private region(name: string): SharedRegion {
    const match = GENERATION.exec(name);
    if (!match || name.includes('/')) throw new Error(`"${name}" is not a shared-memory region name (<prefix>-n<gen> or <prefix>-p<gen>)`);
    const owner = match[1]!;
    const generation = Number(match[2]);
    const known = this.newest.get(owner) ?? [];
    const mapped = known.find((entry) => entry.generation === generation);
    if (mapped) return mapped.region;
    if (known.length > 0 && known.every((entry) => entry.generation > generation)) {
      throw new Error(`shared-memory region ${name} is older than ${owner}${known[0]!.generation}, already mapped: frames name an owner's regions in increasing generations`);
    }
    const region = SharedRegion.open(this.dir, name);
    this.newest.set(owner, [...known, { generation, region }].sort((a, b) => b.generation - a.generation).slice(0, 2));
    return region;
  }
}
