import type { ResponseCache } from './response-cache.js';

/**
 * An in-memory LRU with a byte budget: a Map kept in use order (a hit moves the entry to
 * the end), the oldest entries dropped when a new one would pass the budget. An entry
 * larger than the whole budget is not kept.
 */
export class LocalCache implements ResponseCache {
  private readonly entries = new Map<string, Uint8Array>();
  private bytes = 0;

  constructor(private readonly sizeBytes: number) {}

  async get(key: string): Promise<Uint8Array | undefined> {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  async set(key: string, value: Uint8Array): Promise<void> {
    if (value.byteLength > this.sizeBytes) return;
    const old = this.entries.get(key);
    if (old) {
      this.entries.delete(key);
      this.bytes -= old.byteLength;
    }
    for (const [oldest, entry] of this.entries) {
      if (this.bytes + value.byteLength <= this.sizeBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.byteLength;
    }
    this.entries.set(key, value);
    this.bytes += value.byteLength;
  }

  async close(): Promise<void> {
    this.entries.clear();
    this.bytes = 0;
  }

  /** Bytes held now. */
  get size(): number {
    return this.bytes;
  }
}
