import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { InferenceServer, type Logger, type Tensor } from '@tritium/core';
import { RedisCache } from '../../src/cache/redis-cache.js';
import { redisMissing, startRedis } from '../helpers/redis-server.js';
import { TempRepository, testConfig } from '../helpers/repository.js';
import { newProbe, sleep, testBackend } from '../helpers/test-backend.js';

// Issue 18: a Redis that is alive but never answers (SIGSTOP) cost every cached request the
// whole command timeout (~100 ms each, ~40 requests/s). Now one call waits out the timeout,
// the rest skip Redis until a probe finds it answering again.
const quiet: Logger = { error: () => {}, warn: () => {}, info: () => {}, verbose: () => {} };
const fp32 = (...values: number[]): Tensor => ({ datatype: 'FP32', shape: [values.length], data: new Float32Array(values) });

/** Until `check` holds, polling every 50 ms; false after `ms`. */
async function eventually(check: () => Promise<boolean>, ms: number): Promise<boolean> {
  for (const deadline = performance.now() + ms; performance.now() < deadline; await sleep(50)) if (await check()) return true;
  return false;
}

describe("the Redis cache's timeout option", () => {
  it('refuses one that is not a whole number of milliseconds, at least 1 (0 would let a lookup wait for ever)', async () => {
    for (const timeoutMs of [0, -5, 2.5]) {
      await expect(InferenceServer.start({ modelRepository: '/nonexistent', responseCache: { type: 'redis', timeoutMs }, logger: quiet })).rejects.toThrow(/responseCache\.timeoutMs must be/);
    }
  });
});

if (redisMissing) console.warn(`skipping the frozen-Redis tests: ${redisMissing}`);

describe.skipIf(redisMissing)('the response cache, with a frozen Redis', () => {
  it('answers cached requests at full speed while Redis is stopped, and uses Redis again once it is back', async () => {
    const { port, process: redis } = await startRedis();
    const probe = newProbe();
    const repo = await TempRepository.create({ m: { config: testConfig({ extra: 'response_cache { enable: true }' }) } });
    // A timeout long enough that waiting it out on each lookup (10 s for 50) is far from a breaker's one wait per second.
    const server = await InferenceServer.start({ modelRepository: repo.path, responseCache: { type: 'redis', port, timeoutMs: 200 }, backends: [testBackend(probe)], logger: quiet });
    const infer = (value: number) => server.infer('m', { inputs: { INPUT0: fp32(value, value, value, value) } });
    /** Whether the cache works: asked twice for `value`, the model runs at most the first time. */
    const cacheWorks = async (value: number) => {
      await infer(value);
      const ran = probe.executions;
      await sleep(10); // the insertion follows the answer
      await infer(value);
      return probe.executions === ran;
    };
    try {
      expect(await eventually(() => cacheWorks(1), 3000)).toBe(true);

      redis.kill('SIGSTOP');
      const started = performance.now();
      let slowest = 0;
      for (let i = 0; i < 50; i++) {
        const before = performance.now();
        const response = await infer(1);
        slowest = Math.max(slowest, performance.now() - before);
        expect(Array.from(response.outputs.OUTPUT0!.data as Float32Array)).toEqual([1, 1, 1, 1]);
      }
      const elapsed = performance.now() - started;
      // 50 lookups that each waited out the timeout would take 10 s; with the breaker, one wait per second.
      expect(elapsed).toBeLessThan(3000);
      expect(slowest).toBeLessThan(1000);

      redis.kill('SIGCONT');
      // After the cool-down a probe finds Redis again.
      expect(await eventually(() => cacheWorks(2), 5000)).toBe(true);
    } finally {
      redis.kill('SIGCONT');
      redis.kill('SIGKILL');
      await server.stop();
      await repo.remove();
    }
  });

  it('settles a lookup within the timeout when Redis never answers, and skips Redis after that', async () => {
    const { port, process: redis } = await startRedis();
    const cache = await RedisCache.open({ port, timeoutMs: 300 }, quiet);
    try {
      // Until the connection is ready, calls fail at once (the breaker lets them through again when it is).
      const stored = await eventually(async () => (await cache.set('k', new Uint8Array([1, 2, 3])), (await cache.get('k')) !== undefined), 2000);
      expect(stored).toBe(true);
      redis.kill('SIGSTOP');
      let started = performance.now();
      expect(await cache.get('k')).toBeUndefined();
      expect(performance.now() - started).toBeLessThan(300 + 1000);
      started = performance.now();
      expect(await cache.get('k')).toBeUndefined();
      await cache.set('other', new Uint8Array([4]));
      // Well under one timeout: neither call went to Redis (bounds wide for a loaded machine).
      expect(performance.now() - started).toBeLessThan(150);
    } finally {
      redis.kill('SIGCONT');
      redis.kill('SIGKILL');
      await cache.close();
    }
  });
});
