import { afterEach, describe, expect, it } from 'vitest';
import { InferenceServer, type Backend } from '@tritium/core';
import { TempRepository, testConfig } from '../helpers/repository.js';
import { testBackend } from '../helpers/test-backend.js';

let repo: TempRepository | undefined;
let server: InferenceServer | undefined;
afterEach(async () => {
  await server?.stop();
  await repo?.remove();
  server = repo = undefined;
});

describe('backend registry', () => {
  it('says which official package is missing when a model asks for a backend not installed', async () => {
    repo = await TempRepository.create({ py: { config: 'backend: "python"' }, plan: { config: 'platform: "tensorrt_plan"' } });
    server = await InferenceServer.start({ modelRepository: repo.path, backends: [] });
    const index = await server.repositoryIndex();
    expect(index.find((e) => e.name === 'py')!.reason).toMatch(/@tritium\/backend-python could not be loaded/);
    expect(index.find((e) => e.name === 'plan')!.reason).toMatch(/@tritium\/backend-tensorrt could not be loaded/);
  });

  it('names an unknown backend', async () => {
    repo = await TempRepository.create({ m: { config: 'backend: "mystery"' } });
    server = await InferenceServer.start({ modelRepository: repo.path });
    expect((await server.repositoryIndex())[0]!.reason).toMatch(/no backend 'mystery' is registered/);
  });

  it('initializes a backend once, finalizes it at stop, and isolates a backend whose initialize fails', async () => {
    const calls: string[] = [];
    const good = { ...testBackend(), initialize: async () => void calls.push('init'), finalize: async () => void calls.push('fini') };
    const broken: Backend = { name: 'broken', initialize: async () => { throw new Error('no driver'); }, createModel: async () => { throw new Error('unreachable'); } };
    repo = await TempRepository.create({ a: { config: testConfig({}) }, b: { config: testConfig({}) }, c: { config: 'backend: "broken"' } });
    server = await InferenceServer.start({ modelRepository: repo.path, backends: [good, broken] });
    const index = await server.repositoryIndex();
    expect(index.map((e) => e.state)).toEqual(['READY', 'READY', 'UNAVAILABLE']);
    expect(index[2]!.reason).toMatch(/backend 'broken': no driver/);
    await server.stop();
    expect(calls).toEqual(['init', 'fini']);
  });

  it('refuses two backends with one name', async () => {
    repo = await TempRepository.create({});
    await expect(InferenceServer.start({ modelRepository: repo.path, backends: [testBackend(), testBackend()] })).rejects.toThrow(/given twice/);
  });
});
