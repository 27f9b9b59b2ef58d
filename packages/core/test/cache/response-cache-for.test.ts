import { describe, expect, it } from 'vitest';
import type { Logger } from '@tritium/core';
import { LocalCache } from '../../src/cache/local-cache.js';
import type { ImportIoredis } from '../../src/cache/redis-cache.js';
import { responseCacheFor } from '../../src/cache/response-cache-for.js';

const quiet: Logger = { error: () => {}, warn: () => {}, info: () => {}, verbose: () => {} };

/** ioredis as an import sees it when the package is not installed (Node's ESM and CommonJS texts). */
const missing = (code: string, message: string): ImportIoredis => () => Promise.reject(Object.assign(new Error(message), { code }));
const neverLoaded: ImportIoredis = () => {
  throw new Error('ioredis must not be loaded');
};

describe("the response cache's construction", () => {
  it('names the package to install when a Redis cache is configured and ioredis is absent', async () => {
    for (const load of [
      missing('ERR_MODULE_NOT_FOUND', "Cannot find package 'ioredis' imported from /app/node_modules/@tritium/core/dist/index.js"),
      missing('MODULE_NOT_FOUND', "Cannot find module 'ioredis'\nRequire stack:\n- /app/node_modules/@tritium/core/dist/index.cjs"),
    ]) {
      const refusal = responseCacheFor({ type: 'redis' }, quiet, load);
      await expect(refusal).rejects.toMatchObject({ code: 'UNAVAILABLE' });
      await expect(refusal).rejects.toThrow("responseCache type 'redis' needs the ioredis package, which is not installed: npm install ioredis@5");
    }
  });

  it('tells an installed ioredis that fails to load from a missing one', async () => {
    const broken = missing('ERR_MODULE_NOT_FOUND', "Cannot find package 'cluster-key-slot' imported from /app/node_modules/ioredis/built/cluster/index.js");
    await expect(responseCacheFor({ type: 'redis' }, quiet, broken)).rejects.toThrow(/^responseCache type 'redis': loading ioredis failed: Cannot find package 'cluster-key-slot'/);
  });

  it('loads ioredis only for a Redis cache whose options hold', async () => {
    expect(await responseCacheFor(undefined, quiet, neverLoaded)).toBeUndefined();
    expect(await responseCacheFor({ type: 'local', sizeBytes: 0 }, quiet, neverLoaded)).toBeUndefined();
    expect(await responseCacheFor({ type: 'local', sizeBytes: 1024 }, quiet, neverLoaded)).toBeInstanceOf(LocalCache);
    await expect(responseCacheFor({ type: 'redis', timeoutMs: 0 }, quiet, neverLoaded)).rejects.toThrow(/responseCache\.timeoutMs must be/);
    await expect(responseCacheFor({ type: 'local', sizeBytes: -1 }, quiet, neverLoaded)).rejects.toThrow(/`responseCache` must be/);
  });
});
