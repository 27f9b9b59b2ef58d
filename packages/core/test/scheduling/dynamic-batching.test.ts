import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import type { InferRequest } from '@tritium/core';
import { testConfig } from '../helpers/repository.js';
import { rejection, useServerFixture } from '../helpers/server-fixture.js';
import { newProbe, sleep } from '../helpers/test-backend.js';

// The dynamic batcher end to end, through server.infer(), on the test backend (each
// execution's requests are recorded in probe.batches). The rules themselves are unit
// tested with a fake clock in @tritium/batcher.
const fx = useServerFixture();

const row = (value: number, rows = 1) => ({ INPUT0: { datatype: 'FP32' as const, shape: [rows, 4], data: new Float32Array(4 * rows).fill(value) } });

async function serve(batching: string, options: { count?: number; maxBatchSize?: number; delayMs?: number; dims?: number[]; extra?: string } = {}) {
  const probe = newProbe();
  const extra = `dynamic_batching { ${batching} }\n${options.delayMs ? `parameters { key: "delay_ms" value { string_value: "${options.delayMs}" } }` : ''}\n${options.extra ?? ''}`;
  const config = testConfig({ maxBatchSize: options.maxBatchSize ?? 8, count: options.count ?? 1, dims: options.dims, extra });
  const server = await fx.start({ m: { config } }, {}, probe);
  const infer = (value: number, request: Partial<InferRequest> = {}) => server.infer('m', { inputs: row(value), id: String(value), ...request });
  const batchIds = () => probe.batches.map((batch) => batch.map((r) => r.id));
  return { server, probe, infer, batchIds };
}

describe('dynamic batching', () => {
  it('runs concurrent requests as one batch once the preferred size is reached, and answers each with its own rows', async () => {
    const { server, infer, batchIds } = await serve('max_queue_delay_microseconds: 5000000');
    const responses = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map((v) => infer(v)));
    expect(batchIds()).toEqual([['1', '2', '3', '4', '5', '6', '7', '8']]);
    responses.forEach((response, i) => expect([...(response.outputs.OUTPUT0!.data as Float32Array)]).toEqual(Array(4).fill(i + 1)));
    const stats = server.statistics('m').model_stats[0]!;
    expect(stats.inference_count).toBe(8);
    expect(stats.execution_count).toBe(1);
    expect(stats.batch_stats.map((b) => [b.batch_size, b.compute_infer.count])).toEqual([[8, 1]]);
    expect(stats.inference_stats.queue.count).toBe(8);
  });

  it('counts a request of k rows as k, and never exceeds max_batch_size', async () => {
    const { infer, probe } = await serve('max_queue_delay_microseconds: 20000', { maxBatchSize: 4 });
    await Promise.all([infer(1, { inputs: row(1, 3) }), infer(2, { inputs: row(2, 2) }), infer(3, { inputs: row(3, 1) })]);
    expect(probe.batches.map((batch) => batch.map((r) => r.batchSize))).toEqual([[3], [2, 1]]);
  });

  it('waits max_queue_delay for a fuller batch, then sends what is queued', async () => {
    const { infer, batchIds } = await serve('max_queue_delay_microseconds: 30000');
    const started = performance.now();
    await Promise.all([infer(1), infer(2), infer(3)]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(29);
    expect(batchIds()).toEqual([['1', '2', '3']]);
  });

  it('with no delay, sends what is queued whenever an instance is free', async () => {
    const { infer, batchIds } = await serve('', { delayMs: 30 });
    const first = infer(1);
    await sleep(5);
    await Promise.all([first, infer(2), infer(3), infer(4)]);
    expect(batchIds()).toEqual([['1'], ['2', '3', '4']]);
  });

  it('keeps a batch in flight on every instance', async () => {
    const { infer, probe, batchIds } = await serve('', { count: 2, delayMs: 30 });
    const first = infer(1);
    await sleep(5);
    await Promise.all([first, ...[2, 3, 4].map((v) => infer(v))]);
    expect(batchIds()).toEqual([['1'], ['2', '3', '4']]);
    expect(probe.maxRunning).toBe(2);
    expect(new Set(probe.ranOn)).toEqual(new Set(['m_0_0', 'm_0_1']));
  });

  it('with no delay, requests that arrive together make one batch even while instances are free (callers answered by one batch resubmit at once)', async () => {
    const { infer, batchIds } = await serve('', { count: 2 });
    await Promise.all([1, 2, 3, 4, 5, 6].map((v) => infer(v)));
    expect(batchIds()).toEqual([['1', '2', '3', '4', '5', '6']]);
    // Each answered caller sends its next request at once: they meet in one batch again.
    await Promise.all([7, 8, 9].map(async (v) => infer(await infer(v).then(() => v + 10))));
    expect(batchIds().slice(1)).toEqual([['7', '8', '9'], ['17', '18', '19']]);
  });

  it('batches only requests whose variable-dim inputs have the same shape, unless the input allows ragged batches', async () => {
    const shaped = (value: number, width: number) => ({ INPUT0: { datatype: 'FP32' as const, shape: [1, width], data: new Float32Array(width).fill(value) } });
    const { infer, batchIds } = await serve('max_queue_delay_microseconds: 20000', { dims: [-1] });
    await Promise.all([infer(1, { inputs: shaped(1, 2) }), infer(2, { inputs: shaped(2, 2) }), infer(3, { inputs: shaped(3, 3) }), infer(4, { inputs: shaped(4, 3) })]);
    expect(batchIds()).toEqual([['1', '2'], ['3', '4']]);
  });

  describe('priorities', () => {
    it('serves a higher level (1 is highest) first; priority 0 or above priority_levels means the default level', async () => {
      const { infer, batchIds } = await serve('priority_levels: 3 default_priority_level: 2', { maxBatchSize: 1, delayMs: 20 });
      const busy = infer(0);
      await sleep(5);
      await Promise.all([infer(1, { priority: 3 }), infer(2, { priority: 0 }), infer(3, { priority: 99 }), infer(4, { priority: 1 }), busy]);
      expect(batchIds().flat()).toEqual(['0', '4', '2', '3', '1']);
    });
  });

  describe('queue policies', () => {
    it('refuses a request at once when the queue is full, dropping nothing already queued', async () => {
      const { infer } = await serve('default_queue_policy { max_queue_size: 2 }', { maxBatchSize: 1, delayMs: 20 });
      const busy = infer(0);
      await sleep(5);
      const queued = [infer(1), infer(2)];
      const refused = await rejection(infer(3));
      expect(refused.code).toBe('UNAVAILABLE');
      expect(refused.message).toMatch(/model 'm' version 1 request '3': Exceeds maximum queue size/);
      await expect(Promise.all([busy, ...queued])).resolves.toHaveLength(3);
    });

    it('fails a request whose queue timeout expires (REJECT) with UNAVAILABLE, promptly, counted as a failure', async () => {
      const { server, infer, batchIds } = await serve('default_queue_policy { timeout_action: REJECT default_timeout_microseconds: 10000 }', { maxBatchSize: 1, delayMs: 300 });
      const busy = infer(0);
      await sleep(5);
      const started = performance.now();
      const expired = await rejection(infer(1));
      // Long before the busy instance frees (300 ms).
      expect(performance.now() - started).toBeLessThan(200);
      expect(expired.code).toBe('UNAVAILABLE');
      expect(expired.message).toMatch(/Request timeout expired/);
      await busy;
      expect(batchIds().flat()).toEqual(['0']);
      expect(server.statistics('m').model_stats[0]!.inference_stats.fail.count).toBe(1);
    });

    it('runs an expired request later instead (DELAY), behind the others', async () => {
      const { infer, batchIds } = await serve('default_queue_policy { timeout_action: DELAY default_timeout_microseconds: 50000 }', { maxBatchSize: 1, delayMs: 100 });
      const busy = infer(0);
      await sleep(2);
      const delayed = infer(1);
      // Request 2 arrives after request 1's timeout (at ~52 ms), and its own timeout has not passed when the instance frees (100 ms).
      await sleep(58);
      await Promise.all([busy, delayed, infer(2)]);
      expect(batchIds().flat()).toEqual(['0', '2', '1']);
    });

    it("takes a request's own timeout only where the policy allows it and it is shorter; otherwise ignores it", async () => {
      const policy = 'default_queue_policy { default_timeout_microseconds: 200000 allow_timeout_override: true } priority_levels: 2 default_priority_level: 1 priority_queue_policy { key: 2 value { default_timeout_microseconds: 200000 } }';
      const { infer } = await serve(policy, { maxBatchSize: 1, delayMs: 40 });
      const busy = infer(0);
      await sleep(5);
      const shorter = infer(1, { timeoutMicroseconds: 5000 });
      const longer = infer(2, { timeoutMicroseconds: 900000000 });
      const notAllowed = infer(3, { timeoutMicroseconds: 5000, priority: 2 });
      expect((await rejection(shorter)).message).toMatch(/Request timeout expired/);
      await expect(Promise.all([busy, longer, notAllowed])).resolves.toHaveLength(3);
    });
  });

  it('takes a cancelled or timed-out request out of the queue at once; it never reaches the backend', async () => {
    const { infer, batchIds } = await serve('', { maxBatchSize: 4, delayMs: 20 });
    const busy = infer(0);
    await sleep(5);
    const controller = new AbortController();
    const cancelled = infer(1, { signal: controller.signal });
    const deadline = infer(2, { signal: AbortSignal.timeout(3) });
    const kept = infer(3);
    controller.abort();
    expect((await rejection(cancelled)).code).toBe('CANCELLED');
    expect((await rejection(deadline)).code).toBe('DEADLINE_EXCEEDED');
    await Promise.all([busy, kept]);
    expect(batchIds()).toEqual([['0'], ['3']]);
  });

  it('preserve_ordering: a fast request waits for a slower one that arrived first', async () => {
    const { infer } = await serve('preserve_ordering: true', { count: 2, maxBatchSize: 1 });
    const order: string[] = [];
    const slow = infer(1, { parameters: { delay_ms: 40 } }).then(() => order.push('slow'));
    await sleep(2);
    const fast = infer(2).then(() => order.push('fast'));
    await Promise.all([slow, fast]);
    expect(order).toEqual(['slow', 'fast']);
  });

  it('without preserve_ordering, the fast request answers first', async () => {
    const { infer } = await serve('', { count: 2, maxBatchSize: 1 });
    const order: string[] = [];
    const slow = infer(1, { parameters: { delay_ms: 40 } }).then(() => order.push('slow'));
    await sleep(2);
    const fast = infer(2).then(() => order.push('fast'));
    await Promise.all([slow, fast]);
    expect(order).toEqual(['fast', 'slow']);
  });

  it('stops waiting for a fuller batch when the model unloads: queued requests run at once', async () => {
    const { server, infer, batchIds } = await serve('max_queue_delay_microseconds: 10000000');
    const queued = [infer(1), infer(2)];
    await sleep(5);
    const started = performance.now();
    await server.stop();
    await expect(Promise.all(queued)).resolves.toHaveLength(2);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(batchIds()).toEqual([['1', '2']]);
  });
});
