import { afterEach, describe, expect, it } from 'vitest';
import { InferenceError, InferenceServer, type Backend, type ServerOptions } from '@tritium/core';
import { TempRepository, testConfig, TWO_STEP_ENSEMBLE, type TestModel } from '../helpers/repository.js';
import { testBackend } from '../helpers/test-backend.js';

let repo: TempRepository | undefined;
let server: InferenceServer | undefined;
afterEach(async () => {
  await server?.stop();
  await repo?.remove();
  server = repo = undefined;
});

async function start(models: Record<string, TestModel>, options: Partial<ServerOptions> = {}): Promise<InferenceServer> {
  repo = await TempRepository.create(models);
  server = await InferenceServer.start({ modelRepository: repo.path, backends: [testBackend()], ...options });
  return server;
}

/** The test backend, but each model's first `failures` loads fail, as a load that meets a passing fault. */
function flakyBackend(failures: number): Backend & { attempts: number } {
  const base = testBackend();
  const flaky = {
    ...base,
    attempts: 0,
    async createModel(context: Parameters<Backend['createModel']>[0]) {
      if (++flaky.attempts <= failures) throw new InferenceError('UNAVAILABLE', `passing fault ${flaky.attempts}`);
      return base.createModel(context);
    },
  };
  return flaky;
}

const names = async () => (await server!.repositoryIndex()).filter((entry) => entry.state === 'READY').map((entry) => entry.name);

describe('modelLoadRetryCount', () => {
  it("tries a version's failed load again up to the count given, as Triton's --model-load-retry-count", async () => {
    const backend = flakyBackend(2);
    await start({ m: { config: testConfig({}) } }, { backends: [backend], modelControlMode: 'explicit', modelLoadRetryCount: 2 });
    await server!.loadModel('m');
    expect(backend.attempts).toBe(3);
    expect(await server!.isModelReady('m')).toBe(true);
  });

  it('fails the load with the last failure once the retries are spent; 0 (the default) tries once', async () => {
    const backend = flakyBackend(5);
    await start({ m: { config: testConfig({}) } }, { backends: [backend], modelControlMode: 'explicit', modelLoadRetryCount: 1 });
    await expect(server!.loadModel('m')).rejects.toThrow("load failed for model 'm': version 1 is at UNAVAILABLE state: passing fault 2;");
    expect(backend.attempts).toBe(2);
    await server!.stop();
    const once = flakyBackend(5);
    server = await InferenceServer.start({ modelRepository: repo!.path, backends: [once], modelControlMode: 'explicit' });
    await expect(server.loadModel('m')).rejects.toThrow(/passing fault 1;/);
    expect(once.attempts).toBe(1);
  });

  it('refuses a count that is not a non-negative integer', async () => {
    repo = await TempRepository.create({});
    await expect(InferenceServer.start({ modelRepository: repo.path, modelLoadRetryCount: -1 })).rejects.toThrow('`modelLoadRetryCount` must be a non-negative integer, got -1');
  });
});

describe('strictReadiness', () => {
  const models = { ok: { config: testConfig({}) }, broken: { config: testConfig({}), versions: { 1: JSON.stringify({ fail: 'bad weights' }) } } };

  it('by default, the server is not ready while a model failed to load', async () => {
    await start(models);
    expect(server!.isReady()).toBe(false);
  });

  it('false: the server is ready while live, whatever its models, and not once it stops', async () => {
    await start(models, { strictReadiness: false });
    expect(server!.isReady()).toBe(true);
    expect(await server!.isModelReady('broken')).toBe(false);
    await server!.stop();
    expect(server!.isReady()).toBe(false);
  });
});

describe('unloadModel with unloadDependents', () => {
  // `pair` uses first and second; `solo` uses second only (renamed steps of the two-step ensemble).
  const models = () => ({
    first: { config: testConfig({}) },
    second: { config: testConfig({}) },
    third: { config: testConfig({}) },
    pair: { config: TWO_STEP_ENSEMBLE },
    solo: { config: TWO_STEP_ENSEMBLE.replace('model_name: "first"', 'model_name: "third"') },
  });

  it("unloads an ensemble's models that no other serving ensemble uses", async () => {
    await start(models(), { modelControlMode: 'explicit', startupModels: ['*'] });
    await server!.unloadModel('pair', { unloadDependents: true });
    expect(await names()).toEqual(['second', 'solo', 'third']);
    await server!.unloadModel('solo', { unloadDependents: true });
    expect(await names()).toEqual([]);
  });

  it('without it, unloads the model named only', async () => {
    await start(models(), { modelControlMode: 'explicit', startupModels: ['*'] });
    await server!.unloadModel('pair');
    expect(await names()).toEqual(['first', 'second', 'solo', 'third']);
  });

  it('lets an ensemble request in flight finish its later steps before the models it uses go', async () => {
    const slowFirst = { config: testConfig({ extra: 'parameters { key: "delay_ms" value { string_value: "50" } }' }) };
    await start({ ...models(), first: slowFirst }, { modelControlMode: 'explicit', startupModels: ['*'] });
    const running = server!.infer('pair', { inputs: { A: { datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] } } });
    await new Promise((resolve) => setTimeout(resolve, 10));
    await server!.unloadModel('pair', { unloadDependents: true });
    expect(Array.from((await running).outputs.OUT!.data as Float32Array)).toEqual([1, 2, 3, 4]);
    expect(await names()).toEqual(['second', 'solo', 'third']);
  });

  it('refuses an unloadDependents that is not a boolean, unloading nothing', async () => {
    await start(models(), { modelControlMode: 'explicit', startupModels: ['*'] });
    await expect(server!.unloadModel('pair', { unloadDependents: 'yes' as never })).rejects.toThrow('`unloadDependents` must be a boolean, got "yes"');
    expect(await names()).toEqual(['first', 'pair', 'second', 'solo', 'third']);
  });

  it('follows nested ensembles, and leaves alone a model that is not an ensemble', async () => {
    // pair (an ensemble) then third.
    const outer = TWO_STEP_ENSEMBLE.replace('model_name: "first" model_version: -1 input_map { key: "INPUT0" value: "A" } output_map { key: "OUTPUT0"', 'model_name: "pair" model_version: -1 input_map { key: "A" value: "A" } output_map { key: "OUT"').replace(
      'model_name: "second"',
      'model_name: "third"',
    );
    await start({ ...models(), outer: { config: outer } }, { modelControlMode: 'explicit', startupModels: ['*'] });
    await server!.unloadModel('third', { unloadDependents: true });
    // Only 'third' went: the ensembles that use it (outer, solo) stay loaded, UNAVAILABLE until it is back.
    expect(await names()).toEqual(['first', 'pair', 'second']);
    await server!.loadModel('third');
    expect(await names()).toEqual(['first', 'outer', 'pair', 'second', 'solo', 'third']);
    // outer → pair → first and second; third stays, solo still uses it (and second, so second stays too).
    await server!.unloadModel('outer', { unloadDependents: true });
    expect(await names()).toEqual(['second', 'solo', 'third']);
  });
});
