import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { InferenceServer, type RateLimitOptions, type ServerOptions } from '@tritium/core';
import { rejection, useServerFixture } from '../helpers/server-fixture.js';
import { TempRepository, testConfig } from '../helpers/repository.js';
import { newProbe, sleep } from '../helpers/test-backend.js';

/** A test-backend model whose every execution takes `delayMs`, its instances asking the rate limiter for `limiter` (the block's body). */
function limitedModel(limiter: string, options: { count?: number; delayMs?: number } = {}): string {
  return `backend: "test"
max_batch_size: 0
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] }
instance_group { count: ${options.count ?? 1} kind: KIND_CPU rate_limiter { ${limiter} } }
parameters { key: "delay_ms" value { string_value: "${options.delayMs ?? 5}" } }
`;
}
const request = { inputs: { INPUT0: { datatype: 'FP32' as const, shape: [1], data: [1] } } };
const executionCount: RateLimitOptions = { mode: 'execution_count' };

describe('rate limiter (ServerOptions.rateLimit)', () => {
  const fixture = useServerFixture();

  it('never runs two models that need the one copy of a resource at once, and runs them together when off', async () => {
    const models = { a: { config: limitedModel('resources [ { name: "R" count: 1 } ]') }, b: { config: limitedModel('resources [ { name: "R" count: 1 } ]') } };
    for (const [rateLimit, overlap] of [[executionCount, 1], [{ mode: 'off' } as const, 2]] as const) {
      const probe = newProbe();
      const server = await fixture.start(models, { rateLimit }, probe);
      await Promise.all(Array.from({ length: 6 }, (_, i) => server.infer(i % 2 === 0 ? 'a' : 'b', request)));
      expect(probe.maxRunning, `mode ${rateLimit.mode}`).toBe(overlap);
      expect(probe.executions).toBe(6);
      await server.stop();
      await fixture.repo!.remove();
      fixture.server = fixture.repo = undefined;
    }
  });

  it('limits the instances of one model too: two instances, two copies needed each, three copies', async () => {
    const probe = newProbe();
    const server = await fixture.start({ m: { config: limitedModel('resources [ { name: "R" count: 2 } ]', { count: 2 }) } }, { rateLimit: { mode: 'execution_count', resources: [{ name: 'R', count: 3 }] } }, probe);
    await Promise.all(Array.from({ length: 6 }, () => server.infer('m', request)));
    expect(probe.maxRunning).toBe(1);
    expect(new Set(probe.ranOn)).toEqual(new Set(['m_0_0', 'm_0_1']));
  });

  it('gives an instance of priority 2 half the turns of one of priority 1', async () => {
    const probe = newProbe();
    const shared = 'resources [ { name: "R" global: true count: 1 } ]';
    const server = await fixture.start(
      { fast: { config: limitedModel(`${shared} priority: 1`, { delayMs: 2 }) }, slow: { config: limitedModel(`${shared} priority: 2`, { delayMs: 2 }) } },
      { rateLimit: executionCount },
      probe,
    );
    // Both always have work waiting: 30 requests each, all queued at once.
    await Promise.all(Array.from({ length: 60 }, (_, i) => server.infer(i % 2 === 0 ? 'fast' : 'slow', request)));
    const first30 = probe.ranOn.slice(0, 30);
    const fast = first30.filter((name) => name.startsWith('fast')).length;
    expect(fast).toBeGreaterThanOrEqual(19);
    expect(fast).toBeLessThanOrEqual(21);
  });

  it('limits dynamic batching and sequence batching models alike, and every request is answered', async () => {
    const probe = newProbe();
    const resource = 'rate_limiter { resources [ { name: "R" count: 1 } ] }';
    const batched = limitedModel('resources [ { name: "R" count: 1 } ]').replace('max_batch_size: 0', 'max_batch_size: 4').replace('dims: [ 1 ] }\noutput', 'dims: [ 1 ] }\noutput') + 'dynamic_batching { max_queue_delay_microseconds: 1000 }\n';
    const sequence = testConfig({
      behavior: 'accumulate',
      maxBatchSize: 2,
      count: 2,
      dims: [1],
      extra: `sequence_batching { state { input_name: "STATE_IN" output_name: "STATE_OUT" data_type: TYPE_FP32 dims: [ 1 ] initial_state { data_type: TYPE_FP32 dims: [ 1 ] zero_data: true name: "z" } } }
parameters { key: "delay_ms" value { string_value: "3" } }`,
    }).replace('kind: KIND_CPU }', `kind: KIND_CPU ${resource} }`);
    const server = await fixture.start({ batched: { config: batched }, acc: { config: sequence } }, { rateLimit: executionCount }, probe);
    const batch = Array.from({ length: 8 }, () => server.infer('batched', { inputs: { INPUT0: { datatype: 'FP32', shape: [1, 1], data: [1] } } }));
    const step = (id: number, value: number, flags: { start?: boolean; end?: boolean }) =>
      server.infer('acc', { inputs: { INPUT0: { datatype: 'FP32', shape: [1, 1], data: [value] } }, sequence: { id, ...flags } }).then((r) => (r.outputs.OUTPUT0!.data as Float32Array)[0]);
    const sequences = [1, 2, 3].map(async (id) => [await step(id, 1, { start: true }), await step(id, 2, {}), await step(id, 3, { end: true })]);
    await Promise.all(batch);
    expect(await Promise.all(sequences)).toEqual([[1, 3, 6], [1, 3, 6], [1, 3, 6]]);
    expect(probe.maxRunning).toBe(1);
  });

  it('gives a dynamic batching model its turns beside a default-scheduled one that always has work', async () => {
    const probe = newProbe();
    const shared = 'resources [ { name: "R" count: 1 } ]';
    const batched = limitedModel(shared, { delayMs: 2 }).replace('max_batch_size: 0', 'max_batch_size: 1') + 'dynamic_batching { }\n';
    const server = await fixture.start({ batched: { config: batched }, plain: { config: limitedModel(shared, { delayMs: 2 }) } }, { rateLimit: executionCount }, probe);
    const batchedRequest = { inputs: { INPUT0: { datatype: 'FP32' as const, shape: [1, 1], data: [1] } } };
    // Both always have work waiting: each then has its turn in alternation (executions x priority, equal priorities).
    await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? server.infer('batched', batchedRequest) : server.infer('plain', request))));
    const batchedInFirst20 = probe.ranOn.slice(0, 20).filter((name) => name.startsWith('batched')).length;
    expect(batchedInFirst20).toBeGreaterThanOrEqual(8);
  });

  it('drops a request cancelled while its formed batch waits for the grant: it never reaches the backend', async () => {
    const probe = newProbe();
    const shared = 'resources [ { name: "R" count: 1 } ]';
    const batched = limitedModel(shared).replace('max_batch_size: 0', 'max_batch_size: 1') + 'dynamic_batching { }\n';
    const server = await fixture.start({ batched: { config: batched }, holder: { config: limitedModel(shared, { delayMs: 50 }) } }, { rateLimit: executionCount }, probe);
    const holding = server.infer('holder', request);
    await sleep(10);
    const abort = new AbortController();
    const waiting = server.infer('batched', { inputs: { INPUT0: { datatype: 'FP32', shape: [1, 1], data: [1] } }, signal: abort.signal });
    await sleep(10);
    abort.abort();
    expect((await rejection(waiting)).code).toBe('CANCELLED');
    await holding;
    await sleep(20);
    expect(probe.ranOn).toEqual(['holder_0_0']);
  });

  it('refuses a load whose instance needs more than the resources given, naming the resource', async () => {
    const server = await fixture.start(
      { ok: { config: limitedModel('resources [ { name: "R" count: 2 } ]') }, big: { config: limitedModel('resources [ { name: "R" count: 4 } ]') } },
      { rateLimit: { mode: 'execution_count', resources: [{ name: 'R', count: 2 }] }, continueOnLoadError: true },
    );
    const big = (await server.repositoryIndex()).find((entry) => entry.name === 'big')!;
    expect(big.state).toBe('UNAVAILABLE');
    expect(big.reason).toContain('Resource count for "R" is limited to 2 which will prevent scheduling of one or more model instances, the minimum required count is 4');
    await expect(server.infer('ok', request)).resolves.toBeDefined();
  });

  it('ignores rate_limiter blocks when off, whatever resources they name', async () => {
    const server = await fixture.start({ m: { config: limitedModel('resources [ { name: "R" count: 4 } ]') } }, { rateLimit: { mode: 'off', resources: [{ name: 'R', count: 1 }] } });
    await expect(server.infer('m', request)).resolves.toBeDefined();
  });

  it('frees an unloaded model\'s resources and line', async () => {
    const server = await fixture.start(
      { a: { config: limitedModel('resources [ { name: "R" count: 1 } ]', { delayMs: 30 }) }, b: { config: limitedModel('resources [ { name: "R" count: 1 } ]') } },
      { rateLimit: executionCount, modelControlMode: 'explicit', startupModels: ['a', 'b'] },
    );
    const running = server.infer('a', request);
    await server.unloadModel('a');
    await running;
    await expect(server.infer('b', request)).resolves.toBeDefined();
  });

  it('refuses bad options naming the field', async () => {
    expect((await rejection(fixture.start({}, { rateLimit: { mode: 'sometimes' as never } }))).message).toBe("`rateLimit.mode` must be 'off' or 'execution_count', got \"sometimes\"");
    expect((await rejection(fixture.start({}, { rateLimit: { resources: [{ name: 'R', count: 1.5 }] } }))).message).toBe("rate limiter resource 'R': count must be a non-negative integer, got 1.5");
    expect((await rejection(fixture.start({}, { rateLimit: { resources: [null as never] } }))).message).toBe('a rate limiter resource must be an object { name, count, device? }, got null');
  });

  it('refuses bad options before registering metrics in the application\'s registry: a later start can use it', async () => {
    const registry = new Registry();
    const repo = (fixture.repo = await TempRepository.create({}));
    const start = (options: Partial<ServerOptions>) => InferenceServer.start({ modelRepository: repo.path, metrics: { registry }, ...options });
    await rejection(start({ rateLimit: { mode: 'sometimes' as never } }));
    await rejection(start({ repositoryAgents: [{ name: '' } as never] }));
    fixture.server = await start({});
    expect(registry.getSingleMetric('nv_inference_count')).toBeDefined();
  });
});
