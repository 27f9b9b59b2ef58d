import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InferenceServer, parseModelConfig, type ServerOptions } from '@tritium/core';
import { newProbe, sleep, testBackend } from '../helpers/test-backend.js';
import { TempRepository, testConfig } from '../helpers/repository.js';
import { rejection, states, useServerFixture } from '../helpers/server-fixture.js';

const fx = useServerFixture();

const start = fx.start;

const input = { INPUT0: { datatype: 'FP32' as const, shape: [4], data: new Float32Array(4) } };

describe('model repository and lifecycle', () => {
  it('loads every model in mode none and reports READY', async () => {
    const server = await start({ a: { config: testConfig({}) }, b: { config: testConfig({}) } });
    expect(states(await server.repositoryIndex())).toEqual(['a:1:READY', 'b:1:READY']);
    expect(server.isLive()).toBe(true);
    expect(server.isReady()).toBe(true);
    expect(await server.isModelReady('a')).toBe(true);
    expect(await server.isModelReady('a', 2)).toBe(false);
  });

  it('keeps serving the other models when one fails to load, with the reason', async () => {
    const server = await start({
      good: { config: testConfig({}) },
      badconfig: { config: 'backend: "test"\nmax_batch_size: oops' },
      badfile: { config: testConfig({}), versions: { 1: '{"fail": "corrupt weights"}' } },
      nobackend: { config: 'backend: "nonexistent"' },
    });
    const index = await server.repositoryIndex();
    expect(states(index)).toEqual(['badconfig:-:UNAVAILABLE', 'badfile:1:UNAVAILABLE', 'good:1:READY', 'nobackend:-:UNAVAILABLE']);
    expect(index.find((e) => e.name === 'badconfig')!.reason).toMatch(/max_batch_size/);
    expect(index.find((e) => e.name === 'badfile')!.reason).toMatch(/corrupt weights/);
    expect(index.find((e) => e.name === 'nobackend')!.reason).toMatch(/nonexistent/);
    expect(server.isReady()).toBe(false);
    await expect(server.infer('good', { inputs: input })).resolves.toBeTruthy();
    const error = await rejection(server.infer('badfile', { inputs: input }));
    expect(error.code).toBe('NOT_FOUND');
    expect(error.message).toMatch(/^Request for unknown model: 'badfile' has no available versions: .*corrupt weights/);
    const version = await rejection(server.infer('badfile', { inputs: input, modelVersion: 1 }));
    expect(version.code).toBe('UNAVAILABLE');
    expect(version.message).toMatch(/^Request for unknown model: 'badfile' version 1 is not at ready state: .*corrupt weights/);
  });

  it('refuses to start with continueOnLoadError: false when a model fails', async () => {
    fx.repo = await TempRepository.create({ bad: { config: 'backend: "test"\nbogus_field: 1' } });
    const error = await rejection(InferenceServer.start({ modelRepository: fx.repo.path, backends: [testBackend()], continueOnLoadError: false }));
    expect(error.message).toMatch(/bogus_field/);
  });

  it('rejects bad server options', async () => {
    expect((await rejection(InferenceServer.start({} as ServerOptions))).code).toBe('INVALID_ARG');
    expect((await rejection(InferenceServer.start({ modelRepository: '/x', modelControlMode: 'sometimes' as never }))).message).toMatch(/modelControlMode/);
    expect((await rejection(InferenceServer.start({ modelRepository: '/definitely/not/here' }))).code).toBe('NOT_FOUND');
  });

  it('serves the model from a repository in a list of several, and refuses a name found twice', async () => {
    fx.repo = await TempRepository.create({ a: { config: testConfig({}) }, dup: { config: testConfig({}) } });
    const other = await TempRepository.create({ b: { config: testConfig({}) }, dup: { config: testConfig({}) } });
    try {
      const server = (fx.server = await InferenceServer.start({ modelRepository: [fx.repo.path, other.path], backends: [testBackend()] }));
      const index = await server.repositoryIndex();
      expect(states(index)).toEqual(['a:1:READY', 'b:1:READY', 'dup:-:UNAVAILABLE']);
      expect(index.find((e) => e.name === 'dup')!.reason).toMatch(/more than one repository/);
    } finally {
      await fx.server?.stop();
      await other.remove();
    }
  });

  it('ignores non-numeric version directories', async () => {
    const server = await start({ m: { config: testConfig({}), versions: { 1: '', 3: '' } } });
    await mkdir(join(fx.repo!.path, 'm', 'latest'));
    expect(states(await server.repositoryIndex())).toEqual(['m:3:READY']);
  });

  describe('version policies', () => {
    const versions = { 1: '', 2: '', 3: '' };
    it.each([
      ['latest (default)', '', ['m:3:READY']],
      ['latest 2', 'version_policy { latest { num_versions: 2 } }', ['m:2:READY', 'm:3:READY']],
      ['all', 'version_policy { all {} }', ['m:1:READY', 'm:2:READY', 'm:3:READY']],
      ['specific', 'version_policy { specific { versions: [1, 3] } }', ['m:1:READY', 'm:3:READY']],
      ['specific with a missing version', 'version_policy { specific { versions: [2, 9] } }', ['m:2:READY', 'm:9:UNAVAILABLE']],
    ])('%s', async (_, policy, expected) => {
      const server = await start({ m: { config: testConfig({ extra: policy }), versions } });
      expect(states(await server.repositoryIndex())).toEqual(expected);
    });

    it('routes to the requested version and to the highest by default', async () => {
      const server = await start({ m: { config: testConfig({ extra: 'version_policy { all {} }' }), versions } });
      expect((await server.infer('m', { inputs: input })).modelVersion).toBe(3);
      expect((await server.infer('m', { inputs: input, modelVersion: 1 })).modelVersion).toBe(1);
      expect((await server.modelMetadata('m')).versions).toEqual(['1', '2', '3']);
    });

    it('skips version directories with a leading zero but keeps a bare 0, as Triton\'s code does', async () => {
      const odd = { 0: '', '01': '', '003': '', '00': '' } as Record<number, string>;
      const server = await start({ m: { config: testConfig({ extra: 'version_policy { all {} }' }), versions: odd } });
      expect(states(await server.repositoryIndex())).toEqual(['m:0:READY']);
    });
  });

  it('requires the config name to match the directory', async () => {
    const server = await start({ m: { config: testConfig({ name: 'other' }) } });
    expect((await server.repositoryIndex())[0]!.reason).toMatch(/must match the directory name/);
  });

  it('auto-completes a model without config.pbtxt from its model file', async () => {
    const spec = JSON.stringify({
      input: [{ name: 'X', data_type: 'TYPE_INT32', dims: [2] }],
      output: [{ name: 'Y', data_type: 'TYPE_INT32', dims: [2] }],
    });
    const server = await start({ auto: { versions: { 1: spec } } });
    const config = await server.modelConfig('auto');
    expect(config.backend).toBe('test');
    expect(config.input![0]!.name).toBe('X');
    const response = await server.infer('auto', { inputs: { X: { datatype: 'INT32', shape: [2], data: new Int32Array([5, 6]) } } });
    expect(Array.from(response.outputs.Y!.data as Int32Array)).toEqual([5, 6]);
  });

  it('uses configs/<name>.pbtxt when modelConfigName selects it', async () => {
    fx.repo = await TempRepository.create({ m: { config: testConfig({ count: 1 }) } });
    await mkdir(join(fx.repo.path, 'm', 'configs'));
    await writeFile(join(fx.repo.path, 'm', 'configs', 'big.pbtxt'), testConfig({ count: 3 }));
    const probe = newProbe();
    fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, backends: [testBackend(probe)], modelConfigName: 'big' });
    expect(probe.instancesCreated).toHaveLength(3);
  });

  it('reports metadata and the normalized config', async () => {
    const server = await start({ m: { config: testConfig({ maxBatchSize: 8, dims: [-1, 3] }) } });
    expect(await server.modelMetadata('m')).toEqual({
      name: 'm',
      versions: ['1'],
      platform: 'test',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [-1, -1, 3] }],
      outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [-1, -1, 3] }],
    });
    const config = await server.modelConfig('m');
    expect(config.name).toBe('m');
    expect(config.version_policy).toEqual({ latest: { num_versions: 1 } });
    expect(server.metadata().name).toBe('triton');
  });

  it('emits a state event for each change', async () => {
    fx.repo = await TempRepository.create({ m: { config: testConfig({}) } });
    const server = (fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, backends: [testBackend()], modelControlMode: 'explicit' }));
    const seen: string[] = [];
    server.on('modelStateChanged', (e) => seen.push(`${e.name}:${e.version}:${e.state}`));
    await server.loadModel('m');
    await server.unloadModel('m');
    expect(seen).toEqual(['m:1:LOADING', 'm:1:READY', 'm:1:UNLOADING', 'm:1:UNAVAILABLE']);
  });

  it('reports a reload that replaced a serving version, though it stays READY with the same reason', async () => {
    fx.repo = await TempRepository.create({ m: { config: testConfig({}) } });
    const server = (fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, backends: [testBackend()], modelControlMode: 'explicit' }));
    await server.loadModel('m');
    const seen: string[] = [];
    server.on('modelStateChanged', (e) => seen.push(`${e.name}:${e.version}:${e.state}`));
    await server.loadModel('m', { config: testConfig({ maxBatchSize: 4 }) });
    expect(seen).toEqual(['m:1:READY']);
    expect((await server.modelConfig('m')).max_batch_size).toBe(4);
  });
});

describe('explicit mode', () => {
  it('loads only the startup models, then loads and unloads on request', async () => {
    const probe = newProbe();
    const server = await start({ a: { config: testConfig({}) }, b: { config: testConfig({}) } }, { modelControlMode: 'explicit', startupModels: ['a'] }, probe);
    expect(states(await server.repositoryIndex())).toEqual(['a:1:READY', 'b:-:UNAVAILABLE']);
    expect((await rejection(server.infer('b', { inputs: input }))).code).toBe('NOT_FOUND');
    await server.loadModel('b');
    await expect(server.infer('b', { inputs: input })).resolves.toBeTruthy();
    await server.unloadModel('a');
    expect(states(await server.repositoryIndex())).toEqual(['a:1:UNAVAILABLE', 'b:1:READY']);
    expect((await server.repositoryIndex())[0]!.reason).toBe('unloaded');
    expect(await rejection(server.infer('a', { inputs: input }))).toMatchObject({ code: 'NOT_FOUND', message: "Request for unknown model: 'a' has no available versions: unloaded" });
    expect(probe.instancesFinalized).toEqual(['a_0_0']);
  });

  it("loads everything with startupModels ['*']", async () => {
    const server = await start({ a: { config: testConfig({}) }, b: { config: testConfig({}) } }, { modelControlMode: 'explicit', startupModels: ['*'] });
    expect(states(await server.repositoryIndex())).toEqual(['a:1:READY', 'b:1:READY']);
  });

  it('loads with a config override, as an object or pbtxt text', async () => {
    const probe = newProbe();
    const server = await start({ m: { config: testConfig({ count: 1 }) } }, { modelControlMode: 'explicit' }, probe);
    await server.loadModel('m', { config: testConfig({ count: 2 }) });
    expect(probe.instancesCreated).toEqual(['m_0_0', 'm_0_1']);
    const config = await server.modelConfig('m');
    await server.loadModel('m', { config: { ...config, instance_group: [{ count: 3, kind: 'KIND_CPU' }] } });
    expect(probe.instancesCreated).toHaveLength(5);
    expect((await server.modelConfig('m')).instance_group![0]!.count).toBe(3);
  });

  it("rejects a bad load with Triton's texts, logs why, and keeps the model serving", async () => {
    const errors: string[] = [];
    const logger = { error: (m: string) => errors.push(m), warn: () => {}, info: () => {}, verbose: () => {} };
    const server = await start({ m: { config: testConfig({}) } }, { modelControlMode: 'explicit', startupModels: ['m'], logger });
    const error = await rejection(server.loadModel('m', { config: 'max_batch_size: -3' }));
    expect(error.code).toBe('INTERNAL');
    expect(error.message).toMatch(/^failed to load 'm', failed to poll from model repository: .*max_batch_size/);
    await expect(server.infer('m', { inputs: input })).resolves.toBeTruthy();
    expect((await server.repositoryIndex())[0]).toMatchObject({ state: 'READY', reason: expect.stringMatching(/reload failed/) });
    for (const name of ['ghost', '../m']) {
      expect(await rejection(server.loadModel(name))).toMatchObject({
        code: 'INTERNAL',
        message: `failed to load '${name}', failed to poll from model repository: model '${name}' is not in the model repository`,
      });
    }
    expect(errors).toEqual([
      expect.stringMatching(/^Poll failed for model directory 'm': .*max_batch_size/),
      "Poll failed for model directory 'ghost': model 'ghost' is not in the model repository",
      "Poll failed for model directory '../m': model '../m' is not in the model repository",
    ]);
    // As in Triton, unloading what is not loaded succeeds.
    await server.unloadModel('ghost');
  });

  it("fails a load whose override cannot be read as Triton's 'Invalid config override', logging it", async () => {
    const errors: string[] = [];
    const logger = { error: (m: string) => errors.push(m), warn: () => {}, info: () => {}, verbose: () => {} };
    const server = await start({ m: { config: testConfig({}) } }, { modelControlMode: 'explicit', logger });
    const unreadable = () => {
      throw new Error("load parameter 'config' is not JSON");
    };
    for (const config of ['max_batch_size: [', unreadable]) {
      const error = await rejection(server.loadModel('m', { config }));
      expect(error.code).toBe('INTERNAL');
      expect(error.message).toMatch(/^failed to load 'm', failed to poll from model repository: Invalid config override: /);
    }
    expect(errors[1]).toBe("Poll failed for model directory 'm': Invalid config override: load parameter 'config' is not JSON");
    // The function is called when the load's turn comes, and loads what it returns.
    await server.loadModel('m', { config: () => parseModelConfig(testConfig({ maxBatchSize: 2 })) });
    expect((await server.modelConfig('m')).max_batch_size).toBe(2);
  });

  it("fails a load whose version fails as Triton's 'load failed for model', with the reason", async () => {
    const server = await start(
      { m: { config: testConfig({ extra: 'version_policy { all { } }' }), versions: { 1: '', 2: '{"fail": "corrupt weights"}', 3: '{"fail": "bad file"}' } } },
      { modelControlMode: 'explicit' },
    );
    const error = await rejection(server.loadModel('m'));
    expect(error.code).toBe('INVALID_ARG');
    expect(error.message).toMatch(
      /^load failed for model 'm': version 2 is at UNAVAILABLE state: .*corrupt weights;version 3 is at UNAVAILABLE state: .*bad file;$/,
    );
  });

  it("refuses load/unload outside explicit mode with Triton's UNAVAILABLE text", async () => {
    const server = await start({ m: { config: testConfig({}) } });
    for (const refused of [server.loadModel('m'), server.unloadModel('m')]) {
      expect(await rejection(refused)).toMatchObject({
        code: 'UNAVAILABLE',
        message: 'explicit model load / unload is not allowed if polling is enabled: the server runs in modelControlMode "none"; loading and unloading need "explicit"',
      });
    }
  });

  it("names itself by serverId, 'triton' by default as Triton", async () => {
    const server = await start({ m: { config: testConfig({}) } }, { serverId: 'edge-1' });
    expect(server.metadata().name).toBe('edge-1');
  });

  it('drains in-flight requests before an unloaded model leaves', async () => {
    const probe = newProbe();
    const server = await start({ m: { config: testConfig({}) } }, { modelControlMode: 'explicit', startupModels: ['m'] }, probe);
    const inflight = [1, 2].map(() => server.infer('m', { inputs: input, parameters: { delay_ms: 15 } }));
    await server.unloadModel('m');
    await expect(Promise.all(inflight)).resolves.toHaveLength(2);
    expect(probe.instancesFinalized).toEqual(['m_0_0']);
  });
});

describe('poll mode', () => {
  it('loads new models, reloads changed ones and unloads removed ones', async () => {
    const server = await start({ a: { config: testConfig({}) } }, { modelControlMode: 'poll', pollIntervalMs: 60_000 });
    await fx.repo!.write('b', { config: testConfig({}) });
    await server.pollRepository();
    expect(states(await server.repositoryIndex())).toEqual(['a:1:READY', 'b:1:READY']);
    await fx.repo!.write('a', { config: testConfig({}), versions: { 2: '' } });
    await server.pollRepository();
    expect(states(await server.repositoryIndex())).toEqual(['a:1:UNAVAILABLE', 'a:2:READY', 'b:1:READY']);
    await fx.repo!.removeModel('b');
    await server.pollRepository();
    expect(states(await server.repositoryIndex())).toEqual(['a:1:UNAVAILABLE', 'a:2:READY', 'b:1:UNAVAILABLE']);
  });

  it('reloads under traffic without failing a request, new version ready before the old leaves', async () => {
    const probe = newProbe();
    const server = await start({ m: { config: testConfig({ count: 2 }) } }, { modelControlMode: 'poll', pollIntervalMs: 60_000 }, probe);
    let stop = false;
    const failures: unknown[] = [];
    let served = 0;
    const traffic = Array.from({ length: 8 }, async () => {
      while (!stop) {
        await server.infer('m', { inputs: input, parameters: { delay_ms: 1 } }).then(() => served++, (e) => failures.push(e));
      }
    });
    for (let i = 0; i < 3; i++) {
      await sleep(20);
      await fx.repo!.write('m', { config: testConfig({ count: 2, extra: `# edit ${i}` }) });
      await fx.repo!.touch('m/config.pbtxt');
      await server.pollRepository();
    }
    await sleep(20);
    stop = true;
    await Promise.all(traffic);
    expect(failures).toEqual([]);
    expect(served).toBeGreaterThan(50);
    expect(probe.instancesCreated).toHaveLength(8);
    expect(states(await server.repositoryIndex())).toEqual(['m:1:READY']);
  });

  it('keeps the old model serving when a reload fails', async () => {
    const server = await start({ m: { config: testConfig({}) } }, { modelControlMode: 'poll', pollIntervalMs: 60_000 });
    await writeFile(join(fx.repo!.path, 'm', 'config.pbtxt'), 'backend: "test"\ninput { name: ');
    await server.pollRepository();
    await expect(server.infer('m', { inputs: input })).resolves.toBeTruthy();
    const [entry] = await server.repositoryIndex();
    expect(entry).toMatchObject({ state: 'READY', reason: expect.stringMatching(/reload failed/) });
  });

  it('polls on its own at the interval', async () => {
    const server = await start({}, { modelControlMode: 'poll', pollIntervalMs: 20 });
    await fx.repo!.write('late', { config: testConfig({}) });
    for (let i = 0; i < 100 && !(await server.isModelReady('late')); i++) await sleep(10);
    expect(await server.isModelReady('late')).toBe(true);
  });
});

describe('instance groups and scheduling config', () => {
  it('creates count instances per group with Triton names', async () => {
    const probe = newProbe();
    await start(
      { m: { config: testConfig({ extra: 'instance_group { name: "extra" count: 2 kind: KIND_CPU }' }) } },
      {},
      probe,
    );
    expect(probe.instancesCreated.sort()).toEqual(['extra_0', 'extra_1', 'm_0_0']);
  });

  it('serves sequence batching models, and refuses an ensemble whose step model does not exist, naming it', async () => {
    const server = await start({
      seq: { config: testConfig({ maxBatchSize: 4, extra: 'sequence_batching { }' }) },
      ens: { config: 'platform: "ensemble"\nmax_batch_size: 0\ninput { name: "I" data_type: TYPE_FP32 dims: [1] }\noutput { name: "O" data_type: TYPE_FP32 dims: [1] }\nensemble_scheduling { step { model_name: "x" model_version: -1 input_map { key: "I" value: "I" } output_map { key: "O" value: "O" } } }' },
    });
    const index = await server.repositoryIndex();
    expect(index.find((e) => e.name === 'seq')!.state).toBe('READY');
    expect(index.find((e) => e.name === 'ens')!.reason).toBe("ensemble 'ens' depends on 'x' which has no loaded version: it is not in the model repository");
  });
});
