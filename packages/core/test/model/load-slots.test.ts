import { describe, expect, it } from 'vitest';
import { InferenceServer, type Backend } from '@tritium/core';
import { LoadSlots } from '../../src/model/load-slots.js';
import { sleep } from '../helpers/test-backend.js';
import { TempRepository, testConfig } from '../helpers/repository.js';
import { useServerFixture } from '../helpers/server-fixture.js';

const fx = useServerFixture();

/** A backend whose loads take 20 ms and count how many run at once; `loads[m]` is a model that m's load loads first (a BLS model). */
function countingBackend(loads: Record<string, string> = {}) {
  const seen = { running: 0, most: 0 };
  const backend: Backend = {
    name: 'counting',
    async createModel(context) {
      seen.running++;
      seen.most = Math.max(seen.most, seen.running);
      try {
        const other = loads[context.name];
        if (other) await context.server.loadModel(other);
        await sleep(20);
      } finally {
        seen.running--;
      }
      return { createInstance: async () => ({ execute: async () => [] }) };
    },
  };
  return { backend, seen };
}

async function serveWith(names: string[], backend: Backend, options: { modelLoadThreadCount?: number; startupModels?: string[] }) {
  const config = testConfig({}).replace('backend: "test"', 'backend: "counting"');
  fx.repo = await TempRepository.create(Object.fromEntries(names.map((name) => [name, { config }])));
  fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, backends: [backend], modelControlMode: 'explicit', startupModels: ['*'], ...options });
  return fx.server;
}

describe('LoadSlots', () => {
  it('runs at most its count at once, in the order asked, and counts 0 as 1', async () => {
    const slots = new LoadSlots(2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    await Promise.all(
      [0, 1, 2, 3, 4].map((i) =>
        slots.run(async () => {
          order.push(i);
          most = Math.max(most, ++running);
          await sleep(5);
          running--;
        }),
      ),
    );
    expect(most).toBe(2);
    expect(order).toEqual([0, 1, 2, 3, 4]);
    const one = new LoadSlots(0);
    const first = one.run(() => sleep(10).then(() => 'first'));
    let secondStarted = false;
    const second = one.run(async () => (secondStarted = true));
    await sleep(2);
    expect(secondStarted).toBe(false);
    expect(await Promise.all([first, second])).toEqual(['first', true]);
  });

  it('frees the slot of a task that fails', async () => {
    const slots = new LoadSlots(1);
    await expect(slots.run(async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(slots.run(async () => 'next')).resolves.toBe('next');
  });

  it('lends a turn’s slot while the loading model waits for another load, and takes one back before it goes on', async () => {
    const slots = new LoadSlots(1);
    const turn = slots.turn();
    const steps: string[] = [];
    await turn.run(async () => {
      steps.push('outer loads');
      await turn.lend(() => slots.run(async () => steps.push('inner loads in the lent slot')));
      steps.push('outer goes on');
    });
    // Nothing leaked: the one slot is free again.
    await slots.run(async () => steps.push('next'));
    expect(steps).toEqual(['outer loads', 'inner loads in the lent slot', 'outer goes on', 'next']);
  });
});

describe('ServerOptions.modelLoadThreadCount', () => {
  it("loads 4 model versions at once by default, as Triton's --model-load-thread-count", async () => {
    const { backend, seen } = countingBackend();
    const server = await serveWith(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'], backend, {});
    expect(seen.most).toBe(4);
    expect((await server.repositoryIndex()).every((entry) => entry.state === 'READY')).toBe(true);
  });

  it('loads one at a time with 1, and a model that loads another while it loads does not wait for itself', async () => {
    const { backend, seen } = countingBackend({ bls: 'member' });
    const server = await serveWith(['bls', 'member', 'x'], backend, { modelLoadThreadCount: 1, startupModels: ['bls', 'x'] });
    // The BLS model's load and its member's overlap (it lent its slot); no other pair does.
    expect(seen.most).toBe(2);
    expect((await server.repositoryIndex()).map((entry) => `${entry.name}:${entry.state}`)).toEqual(['bls:READY', 'member:READY', 'x:READY']);
  });

  it('refuses a count that is not a non-negative integer', async () => {
    fx.repo = await TempRepository.create({});
    await expect(InferenceServer.start({ modelRepository: fx.repo.path, modelLoadThreadCount: 1.5 })).rejects.toThrow(
      /`modelLoadThreadCount` must be a non-negative integer, got 1.5/,
    );
  });
});
