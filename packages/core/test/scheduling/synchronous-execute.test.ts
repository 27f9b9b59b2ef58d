import { describe, expect, it } from 'vitest';
import type { Backend } from '@tritium/core';
import type { BackendRequest, ExecuteResult } from '@tritium/core/backend';
import { testConfig } from '../helpers/repository.js';
import { useServerFixture } from '../helpers/server-fixture.js';

/**
 * A backend whose execute answers within the call, returning its results rather than a
 * promise of them: each request's INPUT0 back as OUTPUT0. A first element of -1 throws
 * (failing the batch); -2 fails that request alone; -3 answers with a promise, 20 ms
 * later, so that the requests after it queue.
 */
function synchronousBackend(executions: number[]): Backend {
  return {
    name: 'sync',
    defaultModelFilename: 'model.test',
    async createModel() {
      return {
        async createInstance() {
          return {
            execute(requests: readonly BackendRequest[]): ExecuteResult | Promise<ExecuteResult> {
              executions.push(requests.length);
              const results = requests.map((request) => {
                const first = (request.inputs.INPUT0!.data as Float32Array)[0];
                if (first === -1) throw new Error('the model broke');
                return first === -2 ? new Error('this one is bad') : { OUTPUT0: request.inputs.INPUT0! };
              });
              const slow = (requests[0]!.inputs.INPUT0!.data as Float32Array)[0] === -3;
              return slow ? new Promise((resolve) => setTimeout(() => resolve(results), 20)) : results;
            },
          };
        },
      };
    },
  };
}

const config = (extra = '', maxBatchSize = 0) => testConfig({ maxBatchSize, extra }).replace('backend: "test"', 'backend: "sync"');
const input = (first: number, batched = false) => ({ INPUT0: { datatype: 'FP32' as const, shape: batched ? [1, 4] : [4], data: new Float32Array([first, 2, 3, 4]) } });

describe('a backend that returns its results directly', () => {
  const fixture = useServerFixture();
  const start = (models: Record<string, string>, executions: number[] = []) =>
    fixture.start(Object.fromEntries(Object.entries(models).map(([name, text]) => [name, { config: text }])), { backends: [synchronousBackend(executions)] });

  it('is answered and counted as one that answers with a promise', async () => {
    const s = await start({ plain: config() });
    const response = await s.infer('plain', { inputs: input(7) });
    expect(Array.from(response.outputs.OUTPUT0!.data as Float32Array)).toEqual([7, 2, 3, 4]);
    const stats = s.statistics('plain').model_stats[0]!;
    expect([stats.execution_count, stats.inference_count, stats.inference_stats.success.count]).toEqual([1, 1, 1]);
  });

  it('fails the batch with what it throws, a request with an Error in its slot, and serves on', async () => {
    const s = await start({ plain: config() });
    await expect(s.infer('plain', { inputs: input(-1) })).rejects.toMatchObject({ code: 'INTERNAL', message: expect.stringContaining('the model broke') });
    await expect(s.infer('plain', { inputs: input(-2) })).rejects.toMatchObject({ message: expect.stringContaining('this one is bad') });
    expect(Array.from((await s.infer('plain', { inputs: input(5) })).outputs.OUTPUT0!.data as Float32Array)).toEqual([5, 2, 3, 4]);
  });

  // Behind a slow run the others queue; each then ends within its scheduler's dispatch, and were the
  // instance released there, the next run would start inside it, as deep as the queue is long.
  it('serves a long queue on one instance, and batches a long queue, without runs nested in runs', async () => {
    const executions: number[] = [];
    const s = await start({ plain: config(), batched: config('dynamic_batching { }', 8) }, executions);
    const queued = (model: string, count: number, batched = false) =>
      Promise.all([s.infer(model, { inputs: input(-3, batched) }), ...Array.from({ length: count }, (_, i) => s.infer(model, { inputs: input(i, batched) }))]);
    const plain = await queued('plain', 20_000);
    expect(plain.slice(1).map((r) => (r.outputs.OUTPUT0!.data as Float32Array)[0])).toEqual(Array.from({ length: 20_000 }, (_, i) => i));
    executions.length = 0;
    const batched = await queued('batched', 2_000, true);
    expect(batched).toHaveLength(2_001);
    // All queue before the first dispatch (a microtask): the slow one's batch first, then the rest, eight at a time.
    expect(executions).toEqual([...Array.from({ length: 250 }, () => 8), 1]);
  });
});
