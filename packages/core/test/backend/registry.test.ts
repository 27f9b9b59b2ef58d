import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InferenceServer, type Backend } from '@tritium/core';
import { TempRepository, testConfig } from '../helpers/repository.js';
import { rejection, states, useServerFixture } from '../helpers/server-fixture.js';
import { testBackend } from '../helpers/test-backend.js';

const fx = useServerFixture();

const TRT_CONFIG = testConfig({}).replace('backend: "test"', 'backend: "tensorrt"\ndefault_model_filename: "model.test"');
/** A backend that echoes INPUT0 as OUTPUT0, written as a package's JavaScript. */
const ECHO_FACTORY = `() => ({ name: 'tensorrt', createModel: async () => ({ createInstance: async () => ({ execute: async (rs) => rs.map((r) => ({ OUTPUT0: r.inputs.INPUT0 })) }) }) })`;
const ECHO_BACKEND = `export const createBackend = ${ECHO_FACTORY};`;

const registrySeen = (): unknown => (globalThis as { __tritiumRegistrySeen?: unknown }).__tritiumRegistrySeen;

/**
 * Runs `body` with an application directory whose node_modules holds a
 * `@tritium/backend-tensorrt` made of `source` (an official name no workspace package
 * serves), then restores the working directory and removes the application.
 */
async function withFakeTensorrt(source: string, body: (app: string) => Promise<void>): Promise<void> {
  const app = await mkdtemp(join(tmpdir(), 'tritium-app-'));
  const cwd = process.cwd();
  try {
    const pkg = join(app, 'node_modules', '@tritium', 'backend-tensorrt');
    await mkdir(pkg, { recursive: true });
    await writeFile(join(pkg, 'package.json'), JSON.stringify({ name: '@tritium/backend-tensorrt', type: 'module', main: 'index.js' }));
    await writeFile(join(pkg, 'index.js'), source);
    await body(app);
  } finally {
    process.chdir(cwd);
    await rm(app, { recursive: true, force: true });
  }
}

describe('backend registry', () => {
  it('says which official package is missing when a model asks for a backend not installed', async () => {
    fx.repo = await TempRepository.create({ plan: { config: 'platform: "tensorrt_plan"' } });
    const server = (fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, backends: [] }));
    const index = await server.repositoryIndex();
    expect(index.find((e) => e.name === 'plan')!.reason).toMatch(/@tritium\/backend-tensorrt could not be loaded/);
  });

  it('imports an official backend package again after a failed attempt (installed since)', async () => {
    fx.repo = await TempRepository.create({ trt: { config: TRT_CONFIG } });
    const server = (fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, modelControlMode: 'explicit' }));
    expect((await rejection(server.loadModel('trt'))).message).toMatch(/@tritium\/backend-tensorrt could not be loaded/);
    // The application installs the package: core looks for it from the application's directory.
    await withFakeTensorrt(ECHO_BACKEND, async (app) => {
      process.chdir(app);
      await server.loadModel('trt');
      const response = await server.infer('trt', { inputs: { INPUT0: { datatype: 'FP32', shape: [4], data: new Float32Array(4) } } });
      expect(response.outputs.OUTPUT0!.shape).toEqual([4]);
    });
  });

  it("hands a backend loaded by name its entry of backendSettings, and {} to one without", async () => {
    const seen = 'globalThis.__tritiumRegistrySeen';
    await withFakeTensorrt(`${seen} = []; export const createBackend = (name, settings) => (${seen}.push({ name, settings }), (${ECHO_FACTORY})());`, async (app) => {
      process.chdir(app);
      fx.repo = await TempRepository.create({ trt: { config: TRT_CONFIG } });
      const settings = { tensorrt: { engineCacheDirectory: '/var/cache/trt', workspaceBytes: 1 << 30 }, onnxruntime: { defaultMaxBatchSize: 8 } };
      fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, modelControlMode: 'explicit', backendSettings: settings });
      await fx.server.loadModel('trt');
      expect(registrySeen()).toEqual([{ name: 'tensorrt', settings: settings.tensorrt }]);
      await fx.server.stop();
      fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, modelControlMode: 'explicit', backendSettings: { onnxruntime: {} } });
      await fx.server.loadModel('trt');
      // The package is imported once per process; a second server calls its factory again.
      expect(registrySeen()).toEqual([{ name: 'tensorrt', settings: settings.tensorrt }, { name: 'tensorrt', settings: {} }]);
    });
  });

  it("finds an official package from the application's main script when its directory does not have it (a command's optional peer)", async () => {
    await withFakeTensorrt(ECHO_BACKEND, async (app) => {
      const argv1 = process.argv[1];
      const main = join(app, 'bin', 'command.mjs');
      await mkdir(join(app, 'bin'));
      await writeFile(main, '');
      process.chdir(tmpdir());
      process.argv[1] = main;
      try {
        fx.repo = await TempRepository.create({ trt: { config: TRT_CONFIG } });
        fx.server = await InferenceServer.start({ modelRepository: fx.repo.path });
        expect(states(await fx.server.repositoryIndex())).toEqual(['trt:1:READY']);
      } finally {
        process.argv[1] = argv1!;
      }
    });
  });

  it('says which package failed when an installed one cannot be imported, and which package lacks createBackend', async () => {
    await withFakeTensorrt(`throw new Error('addon ABI mismatch');`, async (app) => {
      process.chdir(app);
      fx.repo = await TempRepository.create({ trt: { config: TRT_CONFIG } });
      fx.server = await InferenceServer.start({ modelRepository: fx.repo.path });
      expect((await fx.server.repositoryIndex())[0]!.reason).toMatch(
        /backend 'tensorrt' is not registered and @tritium\/backend-tensorrt could not be loaded \(addon ABI mismatch\); install it or pass it in InferenceServer.start\(\{ backends \}\)/,
      );
    });
    await fx.server!.stop();
    await withFakeTensorrt(`export const tensorrtBackend = () => ({});`, async (app) => {
      process.chdir(app);
      fx.server = await InferenceServer.start({ modelRepository: fx.repo!.path });
      expect((await fx.server.repositoryIndex())[0]!.reason).toMatch(/@tritium\/backend-tensorrt does not export createBackend\(\)/);
    });
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
