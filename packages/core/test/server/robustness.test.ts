import { mkdir, rename, symlink, utimes, writeFile } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InferenceError, InferenceServer } from '@tritium/core';
import { newProbe, sleep, testBackend } from '../helpers/test-backend.js';
import { TempRepository, testConfig } from '../helpers/repository.js';
import { rejection, states, useServerFixture } from '../helpers/server-fixture.js';
import { captureWarnings } from '../helpers/warnings.js';

// Races, misbehaving listeners and backends, and odd inputs: the server keeps its word.
const fx = useServerFixture();

const start = fx.start;

const input = { INPUT0: { datatype: 'FP32' as const, shape: [4], data: new Float32Array(4) } };

describe('unloading', () => {
  it('never finalizes an instance while a cancelled request still runs on it', async () => {
    const probe = newProbe();
    const server = await start({ m: { config: testConfig({}) } }, { modelControlMode: 'explicit', startupModels: ['m'] }, probe);
    const controller = new AbortController();
    const running = server.infer('m', { inputs: input, parameters: { delay_ms: 40 }, signal: controller.signal });
    await sleep(5);
    controller.abort();
    expect((await rejection(running)).code).toBe('CANCELLED');
    await server.unloadModel('m');
    expect(probe.instancesFinalized).toEqual(['m_0_0']);
    expect(probe.finalizedWhileRunning).toBe(0);
  });

  it('finishes stop() within the exit timeout even when a model never finishes loading', async () => {
    fx.repo = await TempRepository.create({ stuck: { config: testConfig({}), versions: { 1: '{"hang": true}' } } });
    const server = (fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, backends: [testBackend()], modelControlMode: 'explicit', exitTimeoutMs: 50 }));
    void server.loadModel('stuck').catch(() => {});
    await sleep(5);
    const started = Date.now();
    await server.stop();
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('stop()', () => {
  it('refuses new requests, fails open ones at exitTimeoutMs, waits for the execute, then finalizes instances, models, backends', async () => {
    const probe = newProbe();
    const server = await start({ m: { config: testConfig({}) } }, { exitTimeoutMs: 100 }, probe);
    const open = server.infer('m', { inputs: input, parameters: { delay_ms: 150 } });
    void open.catch((error: InferenceError) => probe.events.push(`request ${error.code}`));
    await sleep(5);
    const stopped = server.stop().then(() => probe.events.push('stopped'));
    expect((await rejection(server.infer('m', { inputs: input }))).message).toMatch(/stopping/);
    await stopped;
    expect(probe.events).toEqual(['request UNAVAILABLE', 'execute ended', 'instance m_0_0 finalized', 'model finalized', 'backend finalized', 'stopped']);
  });

  it('finalizes anyway, with a warning naming the model, when an execute never returns', async () => {
    const probe = newProbe();
    const server = await start({ m: { config: testConfig({}) } }, { exitTimeoutMs: 50 }, probe);
    const warnings = captureWarnings();
    const hung = rejection(server.infer('m', { inputs: input, parameters: { hang: true } }));
    await sleep(5);
    const started = performance.now();
    await server.stop();
    expect(performance.now() - started).toBeLessThan(500);
    expect((await hung).code).toBe('UNAVAILABLE');
    expect(warnings).toEqual([{ code: 'TRITIUM_W005', message: expect.stringMatching(/^model 'm' version 1: an execution was still running 50 ms after the exit timeout/) }]);
    expect(probe.events).toEqual(['instance m_0_0 finalized', 'model finalized', 'backend finalized']);
  });
});

describe('a listener that throws', () => {
  it('is reported as a warning and breaks neither loads nor unloads', async () => {
    const probe = newProbe();
    const server = await start({ m: { config: testConfig({}) } }, { modelControlMode: 'explicit' }, probe);
    const warnings = captureWarnings();
    server.on('modelStateChanged', () => {
      throw new Error('listener bug');
    });
    await server.loadModel('m');
    await expect(server.infer('m', { inputs: input })).resolves.toBeTruthy();
    await server.unloadModel('m');
    expect(states(await server.repositoryIndex())).toEqual(['m:1:UNAVAILABLE']);
    expect(probe.instancesFinalized).toEqual(['m_0_0']);
    expect(warnings).toEqual(Array(4).fill({ code: 'TRITIUM_W001', message: 'a modelStateChanged listener threw: Error: listener bug' }));
  });
});

describe('stop() racing other calls', () => {
  it('refuses a load that was waiting when the server stopped, and leaves nothing loaded', async () => {
    const probe = newProbe();
    const server = await start({ m: { config: testConfig({}) } }, { modelControlMode: 'explicit' }, probe);
    const load = server.loadModel('m');
    const stopped = server.stop();
    const error = await load.then(() => undefined, (e: unknown) => e);
    await stopped;
    if (error) expect((error as InferenceError).code).toBe('UNAVAILABLE');
    expect(probe.instancesFinalized.length).toBe(probe.instancesCreated.length);
    expect((await rejection(server.loadModel('m'))).code).toBe('UNAVAILABLE');
  });

  it('does nothing on pollRepository() after stop()', async () => {
    const probe = newProbe();
    const server = await start({}, { modelControlMode: 'poll', pollIntervalMs: 60_000 }, probe);
    await server.stop();
    await fx.repo!.write('late', { config: testConfig({}) });
    await server.pollRepository();
    expect(probe.instancesCreated).toEqual([]);
  });

  it('applies loadModel and unloadModel in the order they were called', async () => {
    const server = await start({ m: { config: testConfig({}) } }, { modelControlMode: 'explicit' });
    await Promise.all([server.loadModel('m'), server.unloadModel('m')]);
    expect(states(await server.repositoryIndex())).toEqual(['m:1:UNAVAILABLE']);
  });
});

describe('poll mode edge cases', () => {
  const poll = { modelControlMode: 'poll' as const, pollIntervalMs: 60_000 };

  it('keeps the old version serving when a new version fails to load, as Triton aborts the whole load', async () => {
    const server = await start({ m: { config: testConfig({}) } }, poll);
    await fx.repo!.write('m', { config: testConfig({}), versions: { 2: '{"fail": "broken weights"}' } });
    await server.pollRepository();
    const index = await server.repositoryIndex();
    expect(states(index)).toEqual(['m:1:READY', 'm:2:UNAVAILABLE']);
    expect(index[1]!.reason).toMatch(/broken weights/);
    expect((await server.infer('m', { inputs: input })).modelVersion).toBe(1);
  });

  it('says once per outage that the repository cannot be read, keeps serving, and recovers when it returns', async () => {
    const server = await start({ m: { config: testConfig({}) } }, poll);
    const warnings = captureWarnings();
    const errors: string[] = [];
    server.on('repositoryError', (error) => errors.push(`${error.code}: ${error.message}`));
    const away = `${fx.repo!.path}-away`;
    await rename(fx.repo!.path, away);
    try {
      await server.pollRepository();
      await server.pollRepository();
      expect(errors).toEqual([expect.stringMatching(/^NOT_FOUND: cannot read model repository/)]);
      expect(warnings).toEqual([{ code: 'TRITIUM_W002', message: expect.stringMatching(/^polling the model repository failed: cannot read model repository .*; loaded models keep serving/) }]);
      await expect(server.infer('m', { inputs: input })).resolves.toBeTruthy();
    } finally {
      await rename(away, fx.repo!.path);
    }
    await fx.repo!.write('late', { config: testConfig({}) });
    await server.pollRepository();
    expect(states(await server.repositoryIndex())).toEqual(['late:1:READY', 'm:1:READY']);
    await rename(fx.repo!.path, away);
    await server.pollRepository();
    await rename(away, fx.repo!.path);
    expect(errors).toHaveLength(2);
  });

  it('loads a model again when its directory is removed and put back unchanged', async () => {
    const server = await start({ m: { config: testConfig({}) } }, poll);
    const away = `${fx.repo!.path}-away`;
    await rename(join(fx.repo!.path, 'm'), away);
    await server.pollRepository();
    expect(await server.isModelReady('m')).toBe(false);
    await rename(away, join(fx.repo!.path, 'm'));
    await server.pollRepository();
    expect(await server.isModelReady('m')).toBe(true);
  });

  it('does not reload a model whose backend wrote a file beside it while loading, nor when a reload rewrites it', async () => {
    const probe = newProbe();
    const server = await start({ m: { config: testConfig({}), versions: { 1: '{"writeCache": true}' } } }, poll, probe);
    await server.pollRepository();
    await server.pollRepository();
    expect(probe.instancesCreated).toHaveLength(1);
    await fx.repo!.touch('m/config.pbtxt');
    await server.pollRepository();
    expect(probe.instancesCreated).toHaveLength(2);
    await server.pollRepository();
    await server.pollRepository();
    expect(probe.instancesCreated).toHaveLength(2);
  });

  it('reloads a model whose files changed while it was loading', async () => {
    const server = await start({}, poll);
    await fx.repo!.write('m', { config: testConfig({ count: 1 }), versions: { 1: '{"loadDelayMs": 50}' } });
    const loading = server.pollRepository();
    await sleep(15);
    await writeFile(join(fx.repo!.path, 'm', 'config.pbtxt'), testConfig({ count: 2 }));
    await fx.repo!.touch('m/config.pbtxt');
    await loading;
    expect((await server.modelConfig('m')).instance_group![0]!.count).toBe(1);
    await server.pollRepository();
    expect((await server.modelConfig('m')).instance_group![0]!.count).toBe(2);
  });

  it('does not retry a model that failed until its files change', async () => {
    const probe = newProbe();
    const server = await start({ m: { config: testConfig({}), versions: { 1: '{"fail": "bad"}' } } }, poll, probe);
    const events: string[] = [];
    server.on('modelStateChanged', (e) => events.push(`${e.version}:${e.state}`));
    await server.pollRepository();
    await server.pollRepository();
    expect(events).toEqual([]);
  });

  it('refuses and unloads a serving model whose name appears in a second repository', async () => {
    fx.repo = await TempRepository.create({ m: { config: testConfig({}) } });
    const other = await TempRepository.create({});
    try {
      const server = (fx.server = await InferenceServer.start({ modelRepository: [fx.repo.path, other.path], backends: [testBackend()], ...poll }));
      await other.write('m', { config: testConfig({}) });
      await server.pollRepository();
      const index = await server.repositoryIndex();
      expect(index.find((e) => e.version === undefined)!.reason).toMatch(/more than one repository/);
      expect(await server.isModelReady('m')).toBe(false);
    } finally {
      await fx.server?.stop();
      await other.remove();
    }
  });

  it('drops the state of a missing version once the policy no longer names it', async () => {
    const server = await start({ m: { config: testConfig({ extra: 'version_policy { specific { versions: [1, 9] } }' }) } }, { modelControlMode: 'explicit', startupModels: ['m'] });
    expect(server.isReady()).toBe(false);
    await server.loadModel('m', { config: testConfig({ extra: 'version_policy { specific { versions: [1] } }' }) });
    expect(states(await server.repositoryIndex())).toEqual(['m:1:READY']);
    expect(server.isReady()).toBe(true);
  });
});

describe('repository layout', () => {
  it('follows symbolic links to model and version directories, and ignores non-canonical version names', async () => {
    const server = await start({}, { modelControlMode: 'explicit' });
    const elsewhere = await TempRepository.create({ real: { config: testConfig({}), versions: { 1: '' } } });
    try {
      await symlink(join(elsewhere.path, 'real'), join(fx.repo!.path, 'linked'));
      await symlink(join(elsewhere.path, 'real', '1'), join(elsewhere.path, 'real', '7'));
      await mkdir(join(elsewhere.path, 'real', '08'));
      await server.loadModel('linked', { config: testConfig({ extra: 'version_policy { all {} }' }) });
      expect(states(await server.repositoryIndex())).toEqual(['linked:1:READY', 'linked:7:READY']);
    } finally {
      await server.stop();
      await elsewhere.remove();
    }
  });

  it('reads a version_policy with no member as all versions, as Triton does', async () => {
    const server = await start({ m: { config: testConfig({ extra: 'version_policy { }' }), versions: { 1: '', 2: '' } } });
    expect(states(await server.repositoryIndex())).toEqual(['m:1:READY', 'm:2:READY']);
  });

  it('prefers a known model file over the <name>.<backend> convention', async () => {
    const server = await start({ 'resnet.v1': { versions: { 1: JSON.stringify({ input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [4] }], output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [4] }] }) } } });
    expect((await server.modelConfig('resnet.v1')).backend).toBe('test');
  });

  it('serves latest {} as Triton does: no version, with the reason', async () => {
    const server = await start({ m: { config: testConfig({ extra: 'version_policy { latest {} }' }) } });
    expect((await server.repositoryIndex())[0]!.reason).toMatch(/no version directory to serve under its version policy/);
  });
});

describe('startup and poll bookkeeping', () => {
  it('keeps a startup model that the repository lacks in the index, so the server is not ready', async () => {
    const server = await start({ a: { config: testConfig({}) } }, { modelControlMode: 'explicit', startupModels: ['a', 'ghost'] });
    const index = await server.repositoryIndex();
    expect(states(index)).toEqual(['a:1:READY', 'ghost:-:UNAVAILABLE']);
    expect(index[1]!.reason).toMatch(/not in the model repository/);
    expect(server.isReady()).toBe(false);
  });

  it('drops a failed model from the index once its directory is gone', async () => {
    const server = await start({ bad: { config: 'max_batch_size: oops' }, good: { config: testConfig({}) } }, { modelControlMode: 'poll', pollIntervalMs: 60_000 });
    expect(server.isReady()).toBe(false);
    await fx.repo!.removeModel('bad');
    await server.pollRepository();
    expect(states(await server.repositoryIndex())).toEqual(['good:1:READY']);
    expect(server.isReady()).toBe(true);
  });

  it('notices a change inside a linked version directory', async () => {
    const probe = newProbe();
    const elsewhere = await TempRepository.create({ src: { versions: { 1: '' } } });
    try {
      const server = await start({ m: { config: testConfig({}), versions: {} } }, { modelControlMode: 'poll', pollIntervalMs: 60_000 }, probe);
      await symlink(join(elsewhere.path, 'src', '1'), join(fx.repo!.path, 'm', '1'));
      await server.pollRepository();
      expect(probe.instancesCreated).toHaveLength(1);
      await writeFile(join(elsewhere.path, 'src', '1', 'model.test'), '{}');
      await utimes(join(elsewhere.path, 'src', '1', 'model.test'), new Date(Date.now() + 5000), new Date(Date.now() + 5000));
      await server.pollRepository();
      expect(probe.instancesCreated).toHaveLength(2);
    } finally {
      await fx.server?.stop();
      await elsewhere.remove();
    }
  });
});

describe('odd requests', () => {
  const optional = `backend: "test"
input { name: "A" data_type: TYPE_FP32 dims: [ 1 ] }
input { name: "B" data_type: TYPE_FP32 dims: [ 1 ] optional: true }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] }`;
  const one = { datatype: 'FP32' as const, shape: [1], data: new Float32Array(1) };

  it('reports a missing required input even when an optional one is given', async () => {
    const server = await start({ m: { config: optional } });
    expect((await rejection(server.infer('m', { inputs: { B: one } }))).message).toMatch(/but got 1 inputs for model 'm'\. Got input\(s\) \['B'\], but missing required input\(s\) \['A'\]/);
    await expect(server.infer('m', { inputs: { A: one } })).resolves.toBeTruthy();
  });

  it('refuses inputs given as a Map', async () => {
    const server = await start({ m: { config: optional } });
    const error = await rejection(server.infer('m', { inputs: new Map([['A', one]]) as never }));
    expect(error.message).toMatch(/`inputs` object/);
  });

  it('refuses timeouts that are not non-negative integers and keeps any other, which the default scheduler ignores', async () => {
    const server = await start({ m: { config: testConfig({}) } });
    for (const timeoutMicroseconds of [Infinity, 1.5, NaN]) {
      expect((await rejection(server.infer('m', { inputs: input, timeoutMicroseconds }))).code).toBe('INVALID_ARG');
    }
    await expect(server.infer('m', { inputs: input, timeoutMicroseconds: 3e12, parameters: { delay_ms: 5 } })).resolves.toBeTruthy();
  });

  it('refuses timer options that setTimeout cannot honour', async () => {
    fx.repo = await TempRepository.create({});
    for (const option of [{ pollIntervalMs: Infinity }, { exitTimeoutMs: -1 }, { exitTimeoutMs: 2 ** 40 }]) {
      const error = await rejection(InferenceServer.start({ modelRepository: fx.repo.path, ...option }));
      expect(error.message).toMatch(/milliseconds/);
    }
  });

  it('gives each variable reshape dimension the size of the matching variable dim', async () => {
    const server = await start({
      m: {
        config: `backend: "test"
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1, 4, -1 ] reshape { shape: [ -1, 2, 2, -1 ] } }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1, 2, 2, -1 ] }`,
      },
    });
    const response = await server.infer('m', { inputs: { INPUT0: { datatype: 'FP32', shape: [3, 4, 5], data: new Float32Array(60) } } });
    expect(response.outputs.OUTPUT0!.shape).toEqual([3, 2, 2, 5]);
  });
});
