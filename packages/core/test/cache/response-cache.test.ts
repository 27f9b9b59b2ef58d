import { describe, expect, it } from 'vitest';
import { InferenceServer, type Logger, type Tensor } from '@tritium/core';
import { cacheKey } from '../../src/cache/cache-key.js';
import { LocalCache } from '../../src/cache/local-cache.js';
import { decodeTensors, encodeTensors } from '../../src/cache/tensor-codec.js';
import { redisMissing, startRedis } from '../helpers/redis-server.js';
import { TempRepository, testConfig } from '../helpers/repository.js';
import { rejection, useServerFixture } from '../helpers/server-fixture.js';
import { newProbe, sleep, testBackend } from '../helpers/test-backend.js';
import { captureWarnings } from '../helpers/warnings.js';

const fx = useServerFixture();
const fp32 = (...values: number[]): Tensor => ({ datatype: 'FP32', shape: [values.length], data: new Float32Array(values) });
const cached = testConfig({ extra: 'response_cache { enable: true }' });

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, error: (m) => lines.push(m), warn: (m) => lines.push(m), info: (m) => lines.push(m), verbose: () => {} };
}

describe('the response cache, in memory', () => {
  it('keeps entries in an LRU within its byte budget', async () => {
    const cache = new LocalCache(100);
    await cache.set('a', new Uint8Array(40));
    await cache.set('b', new Uint8Array(40));
    await cache.get('a'); // a is now the most recent
    await cache.set('c', new Uint8Array(40)); // b goes
    expect(await cache.get('b')).toBeUndefined();
    expect(await cache.get('a')).toBeDefined();
    expect(await cache.get('c')).toBeDefined();
    await cache.set('huge', new Uint8Array(101));
    expect(await cache.get('huge')).toBeUndefined();
    expect(cache.size).toBe(80);
  });

  it('encodes every datatype, BYTES included, and decodes into memory of its own', () => {
    const tensors: Record<string, Tensor> = {
      F: fp32(1.5, -2),
      I: { datatype: 'INT64', shape: [2], data: new BigInt64Array([-1n, 2n ** 62n]) },
      S: { datatype: 'BYTES', shape: [2], data: ['hé', new Uint8Array([0, 255])] },
    };
    const decoded = decodeTensors(encodeTensors(tensors));
    expect(Array.from(decoded.F!.data as Float32Array)).toEqual([1.5, -2]);
    expect(Array.from(decoded.I!.data as BigInt64Array)).toEqual([-1n, 2n ** 62n]);
    expect((decoded.S!.data as Uint8Array[]).map((e) => Array.from(e))).toEqual([Array.from(Buffer.from('hé')), [0, 255]]);
  });

  it('keys on model, version, input names, datatypes, shapes and bytes, and the requested outputs', () => {
    const key = (inputs: Record<string, Tensor>, outputs = ['Y'], model = 'm', version = 1) => cacheKey(model, version, inputs, outputs);
    const base = key({ X: fp32(1, 2, 3, 4) });
    expect(key({ X: fp32(1, 2, 3, 4) })).toBe(base);
    expect(key({ X: { ...fp32(1, 2, 3, 4), shape: [2, 2] } })).not.toBe(base);
    expect(key({ X: { datatype: 'INT32', shape: [4], data: new Int32Array(new Float32Array([1, 2, 3, 4]).buffer) } })).not.toBe(base);
    expect(key({ X: fp32(1, 2, 3, 5) })).not.toBe(base);
    expect(key({ Z: fp32(1, 2, 3, 4) })).not.toBe(base);
    expect(key({ X: fp32(1, 2, 3, 4) }, ['Y', 'W'])).not.toBe(base);
    expect(key({ X: fp32(1, 2, 3, 4) }, ['Y'], 'n')).not.toBe(base);
    expect(key({ X: fp32(1, 2, 3, 4) }, ['Y'], 'm', 2)).not.toBe(base);
  });

  it('answers a repeated request from the cache, caches only successes, and counts hits and misses', async () => {
    const probe = newProbe();
    const server = await fx.start({ m: { config: cached } }, { responseCache: { type: 'local', sizeBytes: 1 << 20 } }, probe);
    await rejection(server.infer('m', { inputs: { INPUT0: fp32(1, 2, 3, 4) }, parameters: { fail: 'once' } }));
    const first = await server.infer('m', { inputs: { INPUT0: fp32(1, 2, 3, 4) } });
    expect(probe.executions).toBe(2); // the failure was not cached
    await sleep(5); // the insertion runs after the answer
    const second = await server.infer('m', { inputs: { INPUT0: fp32(1, 2, 3, 4) } });
    expect(probe.executions).toBe(2);
    expect(Array.from(second.outputs.OUTPUT0!.data as Float32Array)).toEqual([1, 2, 3, 4]);
    // A hit is a copy: changing it changes neither the first answer nor the cache.
    (second.outputs.OUTPUT0!.data as Float32Array)[0] = 99;
    const third = await server.infer('m', { inputs: { INPUT0: fp32(1, 2, 3, 4) } });
    expect((third.outputs.OUTPUT0!.data as Float32Array)[0]).toBe(1);
    expect((first.outputs.OUTPUT0!.data as Float32Array)[0]).toBe(1);
    const stats = server.statistics('m').model_stats[0]!;
    expect(stats.inference_stats.cache_hit.count).toBe(2);
    expect(stats.inference_stats.cache_miss.count).toBe(1);
    expect(stats.inference_stats.success.count).toBe(3);
    expect(stats.execution_count).toBe(1);
    expect(stats.inference_count).toBe(1); // as Triton: hits are successes, not inferences
    const metrics = await server.metrics();
    expect(metrics).toContain('nv_cache_num_hits_per_model{model="m",version="1"} 2');
    expect(metrics).toContain('nv_cache_num_misses_per_model{model="m",version="1"} 1');
  });

  it('serves a model that enables the cache uncached, with a warning, when the server has none', async () => {
    const warnings = captureWarnings();
    const logger = recordingLogger();
    const probe = newProbe();
    const server = await fx.start({ m: { config: cached } }, { logger }, probe);
    await server.infer('m', { inputs: { INPUT0: fp32(1, 2, 3, 4) } });
    await server.infer('m', { inputs: { INPUT0: fp32(1, 2, 3, 4) } });
    expect(probe.executions).toBe(2);
    expect(warnings).toEqual([{ code: 'TRITIUM_W003', message: expect.stringMatching(/model 'm' enables response_cache, but the server has no cache/) }]);
    expect(logger.lines).toEqual([]);
  });

  it('refuses a cache on decoupled and sequence models at load, as Triton does', async () => {
    const server = await fx.start(
      {
        d: { config: testConfig({ name: 'd', extra: 'response_cache { enable: true }\nmodel_transaction_policy { decoupled: true }' }) },
        s: { config: testConfig({ name: 's', maxBatchSize: 4, extra: 'response_cache { enable: true }\nsequence_batching { }' }) },
      },
      { responseCache: { type: 'local', sizeBytes: 1024 } },
    );
    const index = await server.repositoryIndex();
    expect(index.find((e) => e.name === 'd')!.reason).toMatch(/'response_cache' does not support decoupled models/);
    expect(index.find((e) => e.name === 's')!.reason).toMatch(/'response_cache' does not support sequence_batching models/);
  });
});

if (redisMissing) console.warn(`skipping the Redis cache tests: ${redisMissing}`);

describe.skipIf(redisMissing)('the response cache, in Redis', () => {
  it('is shared by two servers, and a Redis that dies turns hits into misses, never failures, warned of once', async () => {
    const { port, process: redis } = await startRedis();
    const warnings = captureWarnings();
    const logger = recordingLogger();
    const probes = [newProbe(), newProbe()];
    const repo = (fx.repo = await TempRepository.create({ m: { config: cached } }));
    const options = { modelRepository: repo.path, responseCache: { type: 'redis' as const, port, timeoutMs: 200 }, logger };
    const [a, b] = await Promise.all(probes.map((probe) => InferenceServer.start({ ...options, backends: [testBackend(probe)] })));
    try {
      await a!.infer('m', { inputs: { INPUT0: fp32(5, 6, 7, 8) } });
      await sleep(50);
      const fromB = await b!.infer('m', { inputs: { INPUT0: fp32(5, 6, 7, 8) } });
      expect(Array.from(fromB.outputs.OUTPUT0!.data as Float32Array)).toEqual([5, 6, 7, 8]);
      expect(probes.map((p) => p.executions)).toEqual([1, 0]);

      redis.kill('SIGKILL');
      await new Promise((resolve) => redis.once('exit', resolve));
      for (let i = 0; i < 3; i++) {
        const response = await b!.infer('m', { inputs: { INPUT0: fp32(5, 6, 7, 8) } });
        expect(Array.from(response.outputs.OUTPUT0!.data as Float32Array)).toEqual([5, 6, 7, 8]);
      }
      expect(probes[1]!.executions).toBe(3);
      await sleep(50);
      const outages = warnings.filter(({ code, message }) => code === 'TRITIUM_W011' && /Redis at 127\.0\.0\.1:\d+ failed/.test(message));
      // Each server's connection reports its own outage, once.
      expect(outages.length).toBeGreaterThanOrEqual(1);
      expect(outages.length).toBeLessThanOrEqual(2);
    } finally {
      redis.kill('SIGKILL');
      await Promise.all([a!.stop(), b!.stop()]);
    }
  });
});
