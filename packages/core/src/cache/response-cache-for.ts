import type { Logger } from '../contract/logger.js';
import { InferenceError } from '../errors.js';
import { LocalCache } from './local-cache.js';
import { RedisCache, type ImportIoredis } from './redis-cache.js';
import type { ResponseCache, ResponseCacheOptions } from './response-cache.js';

/**
 * The cache ServerOptions.responseCache asks for; none for a local cache of 0 bytes.
 * Async because a Redis cache loads ioredis first (`importIoredis` is the seam a test
 * uses to make it missing).
 */
export async function responseCacheFor(options: ResponseCacheOptions | undefined, logger: Logger, importIoredis?: ImportIoredis): Promise<ResponseCache | undefined> {
  if (!options) return undefined;
  if (options.type === 'redis') return RedisCache.open(options, logger, importIoredis);
  if (options.type !== 'local' || !Number.isSafeInteger(options.sizeBytes) || options.sizeBytes < 0) {
    throw new InferenceError('INVALID_ARG', "`responseCache` must be { type: 'local', sizeBytes: <non-negative integer> } or { type: 'redis', ... }");
  }
  return options.sizeBytes > 0 ? new LocalCache(options.sizeBytes) : undefined;
}
