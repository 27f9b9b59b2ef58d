import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InferenceServer, type Backend } from '@tritium/core';
import { TempRepository, testConfig } from '../helpers/repository.js';
import { rejection, useServerFixture } from '../helpers/server-fixture.js';
import { testBackend } from '../helpers/test-backend.js';

const fx = useServerFixture();

describe('backend registry', () => {
  it('says which official package is missing when a model asks for a backend not installed', async () => {
    fx.repo = await TempRepository.create({ plan: { config: 'platform: "tensorrt_plan"' } });
    const server = (fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, backends: [] }));
    const index = await server.repositoryIndex();
    expect(index.find((e) => e.name === 'plan')!.reason).toMatch(/@tritium\/backend-tensorrt could not be loaded/);
  });

  it('imports an official backend package again after a failed attempt (installed since)', async () => {
    fx.repo = await TempRepository.create({ trt: { config: testConfig({}).replace('backend: "test"', 'backend: "tensorrt"\ndefault_model_filename: "model.test"') } });
    const server = (fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, modelControlMode: 'explicit' }));
    expect((await rejection(server.loadModel('trt'))).message).toMatch(/@tritium\/backend-tensorrt could not be loaded/);
    // The application installs the package: core looks for it from the application's directory.
    const app = await mkdtemp(join(tmpdir(), 'tritium-app-'));
    const cwd = process.cwd();
    try {
      const pkg = join(app, 'node_modules', '@tritium', 'backend-tensorrt');
      await mkdir(pkg, { recursive: true });
      await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: '@tritium/backend-tensorrt', type: 'module', main: 'index.js' }));
      await writeFile(
        join(pkg, 'index.js'),
        `export const createBackend = () => ({ name: 'tensorrt', createModel: async () => ({ createInstance: async () => ({ execute: async (rs) => rs.map((r) => ({ OUTPUT0: r.inputs.INPUT0 })) }) }) });`,
      );
      process.chdir(app);
      await server.loadModel('trt');
      const response = await server.infer('trt', { inputs: { INPUT0: { datatype: 'FP32', shape: [4], data: new Float32Array(4) } } });
      expect(response.outputs.OUTPUT0!.shape).toEqual([4]);
    } finally {
      process.chdir(cwd);
      await rm(app, { recursive: true, force: true });
    }
  });

  it('names an unknown backend', async () => {
    fx.repo = await TempRepository.create({ m: { config: 'backend: "mystery"' } });
    const server = (fx.server = await InferenceServer.start({ modelRepository: fx.repo.path }));
    expect((await server.repositoryIndex())[0]!.reason).toMatch(/no backend 'mystery' is registered/);
  });

  it('initializes a backend once, finalizes it at stop, and isolates a backend whose initialize fails', async () => {
    const calls: string[] = [];
    const good = { ...testBackend(), initialize: async () => void calls.push('init'), finalize: async () => void calls.push('fini') };
    const broken: Backend = { name: 'broken', initialize: async () => { throw new Error('no driver'); }, createModel: async () => { throw new Error('unreachable'); } };
    fx.repo = await TempRepository.create({ a: { config: testConfig({}) }, b: { config: testConfig({}) }, c: { config: 'backend: "broken"' } });
    const server = (fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, backends: [good, broken] }));
    const index = await server.repositoryIndex();
    expect(index.map((e) => e.state)).toEqual(['READY', 'READY', 'UNAVAILABLE']);
    expect(index[2]!.reason).toMatch(/backend 'broken': no driver/);
    await server.stop();
    expect(calls).toEqual(['init', 'fini']);
  });

  it('refuses two backends with one name', async () => {
    fx.repo = await TempRepository.create({});
    await expect(InferenceServer.start({ modelRepository: fx.repo.path, backends: [testBackend(), testBackend()] })).rejects.toThrow(/given twice/);
  });
});
