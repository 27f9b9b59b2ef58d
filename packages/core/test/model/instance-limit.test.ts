import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { InferenceServer, type Backend } from '@tritium/core';
import { DEFAULT_MAX_INSTANCES_PER_MODEL } from '../../src/config/instance-limit.js';
import { TempRepository, testConfig } from '../helpers/repository.js';
import { rejection, useServerFixture } from '../helpers/server-fixture.js';
import { newProbe, sleep, testBackend } from '../helpers/test-backend.js';

// One load request must not be able to start instances until the host runs out of
// memory: instance counts have a limit (ServerOptions.maxInstancesPerModel), and
// instances start a few at a time.
const fx = useServerFixture();

const groups = (...counts: number[]) => counts.map((count, i) => `instance_group { name: "g${i}" count: ${count} kind: KIND_CPU }`).join('\n');
/** A test-backend config whose instance groups are `counts`. */
const withGroups = (...counts: number[]) => testConfig({}).replace(/instance_group \{[^}]*\}/, groups(...counts));

describe('instance count limit', () => {
  it('refuses instance_group { count: 10000 } at once, naming the group, the count, the limit and the option, with no instance created', async () => {
    const probe = newProbe();
    const server = await fx.start({ m: { config: testConfig({}) } }, { modelControlMode: 'explicit' }, probe);
    const started = performance.now();
    const error = await rejection(server.loadModel('m', { config: withGroups(10_000) }));
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(error.code).toBe('INTERNAL');
    expect(error.message).toBe(
      `failed to load 'm', failed to poll from model repository: model 'm': instance group g0 asks for 10000 instance(s), over the limit of ${DEFAULT_MAX_INSTANCES_PER_MODEL} instances per model (raise it with the server option maxInstancesPerModel, or tritium serve --max-instances-per-model)`,
    );
    expect(probe.instancesCreated).toEqual([]);
  });

  it("counts every group of the model together, and a group's instances on each GPU it lists", async () => {
    const server = await fx.start({ m: { config: testConfig({}) } }, { modelControlMode: 'explicit', maxInstancesPerModel: 4 });
    const error = await rejection(server.loadModel('m', { config: withGroups(2, 3) }));
    expect(error.message).toMatch(/instance group g1 asks for 3 instance\(s\), 5 with the model's other groups, over the limit of 4 instances per model/);
    const gpus = testConfig({}).replace(/instance_group \{[^}]*\}/, 'instance_group { name: "g" count: 2 kind: KIND_GPU gpus: [0, 1, 2] }');
    expect((await rejection(server.loadModel('m', { config: gpus }))).message).toMatch(/instance group g asks for 6 instance\(s\)/);
  });

  it('loads a model at the limit, and maxInstancesPerModel raises it', async () => {
    const probe = newProbe();
    const server = await fx.start({ m: { config: withGroups(DEFAULT_MAX_INSTANCES_PER_MODEL - 1, 1) } }, {}, probe);
    expect(await server.isModelReady('m')).toBe(true);
    expect(probe.instancesCreated).toHaveLength(DEFAULT_MAX_INSTANCES_PER_MODEL);
    await fx.server!.stop();

    fx.server = await InferenceServer.start({ modelRepository: fx.repo!.path, backends: [testBackend(newProbe())], maxInstancesPerModel: 100, modelControlMode: 'explicit' });
    await fx.server.loadModel('m', { config: withGroups(100) });
    expect(await fx.server.isModelReady('m')).toBe(true);
  });

  it('refuses a limit that is not a positive integer', async () => {
    const repo = await TempRepository.create();
    try {
      for (const limit of [0, -1, 1.5, Number.NaN]) {
        const error = await rejection(InferenceServer.start({ modelRepository: repo.path, maxInstancesPerModel: limit }));
        expect(error.message).toMatch(/`maxInstancesPerModel` must be a positive integer/);
      }
    } finally {
      await repo.remove();
    }
  });
});

describe('instance creation', () => {
  /** A backend whose instances take a while to create, counting how many are created at once. */
  function slowCreation(failAt?: number) {
    const seen = { running: 0, maxRunning: 0, created: 0, finalized: 0 };
    const backend: Backend = {
      name: 'slow',
      defaultModelFilename: 'model.test',
      async createModel() {
        return {
          async createInstance() {
            const index = seen.created++;
            seen.running++;
            seen.maxRunning = Math.max(seen.maxRunning, seen.running);
            await sleep(5);
            seen.running--;
            if (index === failAt) throw new Error('instance failed to start');
            return { execute: async (requests) => requests.map(() => ({})), finalize: async () => void seen.finalized++ };
          },
        };
      },
    };
    return { seen, backend };
  }

  const config = (count: number) => testConfig({}).replace('backend: "test"', 'backend: "slow"').replace(/instance_group \{[^}]*\}/, groups(count));

  it('starts a large instance group a few instances at a time', async () => {
    const { seen, backend } = slowCreation();
    fx.repo = await TempRepository.create({ m: { config: config(40) } });
    fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, backends: [backend] });
    expect(await fx.server.isModelReady('m')).toBe(true);
    expect(seen.created).toBe(40);
    expect(seen.maxRunning).toBeGreaterThan(1);
    expect(seen.maxRunning).toBeLessThanOrEqual(8);
  });

  it('starts no more instances once one fails, and finalizes those it made', async () => {
    const { seen, backend } = slowCreation(3);
    fx.repo = await TempRepository.create({ m: { config: config(40) } });
    fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, backends: [backend] });
    const [entry] = await fx.server.repositoryIndex();
    expect(entry!.state).toBe('UNAVAILABLE');
    expect(entry!.reason).toMatch(/creating an instance: instance failed to start/);
    expect(seen.created).toBeLessThan(40);
    expect(seen.finalized).toBe(seen.created - 1);
  });
});
