import { SharedRegion } from './shared-region.js';

const GENERATION = /^(.*-[np])(\d+)$/;

/**
 * The receiver's side of PROTOCOL.md's shared memory: a region is mapped the first time a
 * frame names it and its file unlinked at once; only the newest generation of each owner
 * (`<prefix>-n<gen>` / `<prefix>-p<gen>`) is kept, since frames name an owner's regions in
 * increasing generations. Views handed out keep their mapping alive on their own.
 */
export class PeerRegions {
  private readonly newest = new Map<string, { generation: number; region: SharedRegion }>();

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
    const known = this.newest.get(owner);
    if (known && known.generation === generation) return known.region;
    if (known && known.generation > generation) {
      throw new Error(`shared-memory region ${name} is older than ${owner}${known.generation}, already mapped: frames name an owner's regions in increasing generations`);
    }
    const region = SharedRegion.open(this.dir, name);
    this.newest.set(owner, { generation, region });
    return region;
  }
}
