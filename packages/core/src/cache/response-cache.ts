/**
 * Where successful responses are kept (Triton's response cache): by key, the encoded
 * outputs. A cache that fails (Redis down, a timeout) never fails a request: get answers
 * undefined (a miss) and set does nothing.
 */
export interface ResponseCache {
  get(key: string): Promise<Uint8Array | undefined>;
  set(key: string, value: Uint8Array): Promise<void>;
  close(): Promise<void>;
}

/** The server option that picks the cache, as Triton's --cache-config does (`local` or `redis`). */
export type ResponseCacheOptions =
  | {
      readonly type: 'local';
      /** The byte budget of the in-memory LRU; 0 disables the cache. */
      readonly sizeBytes: number;
    }
  | {
      readonly type: 'redis';
      readonly host?: string;
      readonly port?: number;
      readonly password?: string;
      /**
       * How long one Redis call may take before it counts as a miss (or a skipped insertion),
       * in whole milliseconds, at least 1. Default 20 ms. After a failure Redis is left alone
       * for 1 s, then probed by one call.
       */
      readonly timeoutMs?: number;
      /** Seconds an entry lives in Redis; default none. */
      readonly ttlSeconds?: number;
    };
