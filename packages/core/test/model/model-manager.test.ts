import { afterEach, describe, expect, it } from 'vitest';
import { InferenceError } from '@tritium/core';
import { DETACHED } from '../helpers/detached.js';
import { BackendRegistry } from '../../src/backend/registry.js';
import { ModelManager } from '../../src/model/model-manager.js';
import { ModelRepository } from '../../src/repository/model-repository.js';
import { TempRepository, testConfig } from '../helpers/repository.js';
import { newProbe, testBackend } from '../helpers/test-backend.js';

// The manager alone, where the order of queued operations can be set exactly.
let repo: TempRepository | undefined;
afterEach(async () => {
  await repo?.remove();
  repo = undefined;
});

describe('model manager', () => {
  it('serves a load queued behind a load that found no model directory', async () => {
    repo = await TempRepository.create({ m: { config: testConfig({}) } });
    const probe = newProbe();
    const manager = new ModelManager(new BackendRegistry([testBackend(probe)]), { exitTimeoutMs: 1000, maxInstancesPerModel: 64, onStateChange: () => {}, loadThreadCount: 4, ...DETACHED });
    const source = await new ModelRepository([repo.path]).find('m');
    const missing = manager.load('m', async () => {
      throw new InferenceError('NOT_FOUND', `model 'm' is not in the model repository`);
    });
    const found = manager.load('m', async () => source);
    await expect(missing).rejects.toThrow(/^failed to load 'm', failed to poll from model repository: model 'm' is not in the model repository/);
    await found;
    expect(manager.serving('m').version).toBe(1);
    await manager.stop();
    expect(probe.instancesFinalized).toEqual(['m_0_0']);
  });
});
