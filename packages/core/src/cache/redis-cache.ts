import { Redis } from 'ioredis';
import type { Logger } from '../types.js';
import type { ResponseCache } from './response-cache.js';

/** Keys in Redis are prefixed, so Tritium's entries stand apart from the rest of a shared Redis. */
const PREFIX = 'tritium:response:';

/**
 * A response cache in Redis (ioredis), shared by every process that points at it. A
 * failure (Redis down, a call past `timeoutMs`) is a miss, never a failed request; it is
 * logged once per outage, and once more when Redis answers again.
 */
export class RedisCache implements ResponseCache {
  private readonly redis: Redis;
  private failing = false;

  constructor(
    private readonly options: { host?: string; port?: number; password?: string; timeoutMs?: number; ttlSeconds?: number },
    private readonly logger: Logger,
  ) {
    this.redis = new Redis({
      host: options.host ?? '127.0.0.1',
      port: options.port ?? 6379,
      password: options.password,
      commandTimeout: options.timeoutMs ?? 100,
      // While Redis is away, calls fail at once (a miss) instead of queueing behind the reconnection.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
    });
    this.redis.on('error', (error: Error) => this.failed(error));
    this.redis.on('ready', () => {
      if (!this.failing) return;
      this.failing = false;
      this.logger.info(`response cache: Redis at ${this.where} answers again`);
    });
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      return (await this.redis.getBuffer(PREFIX + key)) ?? undefined;
    } catch (error) {
      this.failed(error as Error);
      return undefined;
    }
  }

  async set(key: string, value: Uint8Array): Promise<void> {
    try {
      const buffer = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
      if (this.options.ttlSeconds) await this.redis.set(PREFIX + key, buffer, 'EX', this.options.ttlSeconds);
      else await this.redis.set(PREFIX + key, buffer);
    } catch (error) {
      this.failed(error as Error);
    }
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  private get where(): string {
    return `${this.options.host ?? '127.0.0.1'}:${this.options.port ?? 6379}`;
  }

  private failed(error: Error): void {
    if (this.failing) return;
    this.failing = true;
    this.logger.warn(`response cache: Redis at ${this.where} failed (${error.message}); requests are served uncached until it answers again`);
  }
}
