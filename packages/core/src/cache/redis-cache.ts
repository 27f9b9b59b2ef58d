import type { Redis } from 'ioredis';
import type { Logger } from '../contract/logger.js';
import { InferenceError } from '../errors.js';
import { emitTritiumWarning } from '../warnings.js';
import { CircuitBreaker } from './circuit-breaker.js';
import type { ResponseCache, ResponseCacheOptions } from './response-cache.js';

/** Keys in Redis are prefixed, so Tritium's entries stand apart from the rest of a shared Redis. */
const PREFIX = 'tritium:response:';

/**
 * How long one Redis call may take by default. A healthy Redis answers a GET in well under a
 * millisecond on the same host or network, so 20 ms leaves room for a slow moment and a
 * response of a few MB, yet a Redis that does not answer costs one request only 20 ms.
 */
const DEFAULT_REDIS_TIMEOUT_MS = 20;

/** After a failure, Redis is left alone this long; then one call probes it. */
const REDIS_RETRY_AFTER_MS = 1000;

type RedisCacheOptions = Omit<Extract<ResponseCacheOptions, { type: 'redis' }>, 'type'>;

/** How ioredis is loaded: `import('ioredis')`, or in a test a stand-in that fails as a missing package does. */
export type ImportIoredis = () => Promise<Pick<typeof import('ioredis'), 'Redis'>>;

const importIoredis: ImportIoredis = () => import('ioredis');

/**
 * ioredis's client class. ioredis is an optional peer dependency of core: only a Redis
 * cache loads it, so a server without one runs where it is not installed.
 */
async function redisClient(load: ImportIoredis): Promise<typeof Redis> {
  try {
    return (await load()).Redis;
  } catch (error) {
    if (isMissingIoredis(error)) {
      throw new InferenceError('UNAVAILABLE', "responseCache type 'redis' needs the ioredis package, which is not installed: npm install ioredis@5", { cause: error });
    }
    throw new InferenceError('UNAVAILABLE', `responseCache type 'redis': loading ioredis failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** ioredis itself is absent (ESM's or CommonJS's not-found, naming it), not a package ioredis needs. */
function isMissingIoredis(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && /'ioredis'/.test(String((error as Error).message));
}

/**
 * A response cache in Redis (ioredis), shared by every process that points at it. A
 * failure (Redis down, a call past `timeoutMs`) is a miss, or a skipped insertion, never a
 * failed or slowed request: after one, a circuit breaker keeps calls away from Redis for
 * REDIS_RETRY_AFTER_MS, then lets one through to probe it. The outage is logged once, and
 * once more when Redis answers again.
 */
export class RedisCache implements ResponseCache {
  private readonly redis: Redis;
  private readonly breaker: CircuitBreaker;

  /** Checks the options, loads ioredis (refused options never need it) and connects. */
  static async open(options: RedisCacheOptions, logger: Logger, load: ImportIoredis = importIoredis): Promise<RedisCache> {
    const timeoutMs = options.timeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS;
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs < 1) {
      throw new InferenceError('INVALID_ARG', `responseCache.timeoutMs must be a whole number of milliseconds, at least 1, got ${timeoutMs}`);
    }
    return new RedisCache(await redisClient(load), options, timeoutMs, logger);
  }

  private constructor(
    Client: typeof Redis,
    private readonly options: RedisCacheOptions,
    timeoutMs: number,
    logger: Logger,
  ) {
    this.breaker = new CircuitBreaker(REDIS_RETRY_AFTER_MS, {
      opened: (error) => emitTritiumWarning('TRITIUM_W011', `response cache: Redis at ${this.where} failed (${error.message}); requests are served uncached, Redis is tried again every ${REDIS_RETRY_AFTER_MS} ms`),
      closed: () => logger.info(`response cache: Redis at ${this.where} answers again`),
    });
    this.redis = new Client({
      host: options.host ?? '127.0.0.1',
      port: options.port ?? 6379,
      password: options.password,
      // Every call settles within this, answered or not (a stopped Redis keeps its connection open).
      commandTimeout: timeoutMs,
      // While Redis is away, calls fail at once (a miss) instead of queueing behind the reconnection.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt) => Math.min(attempt * 100, 2_000),
    });
    this.redis.on('error', (error: Error) => this.breaker.failed(error));
    // Connected and answering its ready check: no need to wait for a probe.
    this.redis.on('ready', () => this.breaker.succeeded());
  }

  get(key: string): Promise<Uint8Array | undefined> {
    return this.call(async () => (await this.redis.getBuffer(PREFIX + key)) ?? undefined);
  }

  async set(key: string, value: Uint8Array): Promise<void> {
    const buffer = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    const ttl = this.options.ttlSeconds;
    await this.call(() => (ttl ? this.redis.set(PREFIX + key, buffer, 'EX', ttl) : this.redis.set(PREFIX + key, buffer)));
  }

  async close(): Promise<void> {
    this.redis.disconnect();
  }

  private get where(): string {
    return `${this.options.host ?? '127.0.0.1'}:${this.options.port ?? 6379}`;
  }

  /** `call`'s result, or undefined when it fails or the breaker keeps it from Redis. */
  private async call<T>(call: () => Promise<T>): Promise<T | undefined> {
    if (!this.breaker.admits()) return undefined;
    try {
      const result = await call();
      this.breaker.succeeded();
      return result;
    } catch (error) {
      this.breaker.failed(error as Error);
      return undefined;
    }
  }
}
