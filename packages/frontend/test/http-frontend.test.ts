import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { connect } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InferenceServer, type Backend } from '@tritium/core';
import { startHttpFrontend } from '@tritium/frontend';
import { TempRepository, testConfig } from '../../core/test/helpers/repository.js';
import { newProbe, sleep, testBackend } from '../../core/test/helpers/test-backend.js';
import { attachSharedMemory } from '../src/shared-memory/client-shared-memory.js';
import { httpRequest, rawExchange } from './helpers/http-client.js';
import { startHttpFixture, type HttpFixture } from './helpers/http-fixture.js';
import { accumulateModel, addModel, repeatModel, simpleModel } from './helpers/http-models.js';

const json = (body: unknown) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });

describe('HTTP frontend: health, metadata, configuration, statistics', () => {
  let fx: HttpFixture;
  beforeAll(async () => {
    fx = await startHttpFixture({ simple: simpleModel, add: addModel });
  });
  afterAll(() => fx.stop());

  it('answers live and ready with 200 and no body', async () => {
    for (const probe of ['live', 'ready']) {
      const res = await fetch(`${fx.url}/v2/health/${probe}`);
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('');
    }
  });

  it('gives the server metadata with the extensions the server and frontend offer', async () => {
    const res = await fetch(`${fx.url}/v2`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const metadata = (await res.json()) as { name: string; version: string; extensions: string[] };
    expect(metadata.name).toBe('triton');
    expect(metadata.version).toBe(fx.server.metadata().version);
    expect(metadata.extensions).toEqual(expect.arrayContaining(['binary_tensor_data', 'classification', 'sequence', 'model_repository', 'system_shared_memory', 'statistics']));
    expect(metadata.extensions).not.toContain('cuda_shared_memory');
  });

  it('gives model metadata, for the model and for a version', async () => {
    const expected = {
      name: 'add',
      versions: ['1'],
      platform: 'test',
      inputs: [
        { name: 'INPUT0', datatype: 'FP32', shape: [4] },
        { name: 'INPUT1', datatype: 'FP32', shape: [4] },
      ],
      outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: [4] }],
    };
    expect(await (await fetch(`${fx.url}/v2/models/add`)).json()).toEqual(expected);
    expect(await (await fetch(`${fx.url}/v2/models/add/versions/1`)).json()).toEqual(expected);
  });

  it("answers a served version whose instance is not ready with 400 and Triton's words", async () => {
    const unready: Backend = {
      name: 'unready',
      defaultModelFilename: 'model.test',
      createModel: async () => ({ createInstance: async () => ({ execute: async () => [], isReady: async () => false }) }),
    };
    const own = await startHttpFixture({ m: { config: 'backend: "unready"\ninput { name: "I" data_type: TYPE_FP32 dims: [ 1 ] }\noutput { name: "O" data_type: TYPE_FP32 dims: [ 1 ] }' } }, { backends: [unready] });
    try {
      const res = await fetch(`${own.url}/v2/models/m/ready`);
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: 'Model version not ready' });
    } finally {
      await own.stop();
    }
  });

  it("answers model readiness with 200, and a version that cannot be found with the server's error for it, as Triton does", async () => {
    expect((await fetch(`${fx.url}/v2/models/simple/ready`)).status).toBe(200);
    expect((await fetch(`${fx.url}/v2/models/simple/versions/1/ready`)).status).toBe(200);
    const res = await fetch(`${fx.url}/v2/models/simple/versions/7/ready`);
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: string }).error).toContain("'simple' version 7");
  });

  it("gives a model's configuration as Triton's JSON", async () => {
    const config = (await (await fetch(`${fx.url}/v2/models/add/config`)).json()) as Record<string, any>;
    expect(config.name).toBe('add');
    expect(config.backend).toBe('test');
    expect(config.max_batch_size).toBe(0);
    expect(config.input.map((i: { name: string; data_type: string; dims: number[] }) => [i.name, i.data_type, i.dims])).toEqual([
      ['INPUT0', 'TYPE_FP32', [4]],
      ['INPUT1', 'TYPE_FP32', [4]],
    ]);
  });

  it('gives statistics per model, per version and for all models', async () => {
    const inputs = [
      { name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] },
      { name: 'INPUT1', datatype: 'FP32', shape: [4], data: [1, 1, 1, 1] },
    ];
    expect((await fetch(`${fx.url}/v2/models/add/infer`, json({ inputs }))).status).toBe(200);
    const one = (await (await fetch(`${fx.url}/v2/models/add/stats`)).json()) as { model_stats: Array<Record<string, any>> };
    expect(one.model_stats).toHaveLength(1);
    expect(one.model_stats[0]).toMatchObject({ name: 'add', version: '1' });
    expect(one.model_stats[0]!.inference_stats.success.count).toBeGreaterThanOrEqual(1);
    const versioned = (await (await fetch(`${fx.url}/v2/models/add/versions/1/stats`)).json()) as { model_stats: unknown[] };
    expect(versioned.model_stats).toHaveLength(1);
    const all = (await (await fetch(`${fx.url}/v2/models/stats`)).json()) as { model_stats: Array<{ name: string }> };
    expect(all.model_stats.map((s) => s.name).sort()).toEqual(['add', 'simple']);
  });

  it('answers an unknown model with 404 and the reason', async () => {
    for (const path of ['/v2/models/nope', '/v2/models/nope/config', '/v2/models/nope/stats']) {
      const res = await fetch(`${fx.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { error: string }).error, path).toContain('nope');
    }
  });

  it('answers unknown routes with 404 and wrong methods with 405, saying which', async () => {
    const unknown = await fetch(`${fx.url}/v2/nothing/here`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'Not Found: no route for GET /v2/nothing/here' });
    expect((await fetch(`${fx.url}/v1/models/simple`)).status).toBe(404);
    expect((await fetch(`${fx.url}/v2/models/simple/versions/x`)).status).toBe(404);
    const wrong = await fetch(`${fx.url}/v2/models/simple/infer`);
    expect(wrong.status).toBe(405);
    expect(wrong.headers.get('allow')).toBe('POST');
    expect(await wrong.json()).toEqual({ error: 'Method Not Allowed: /v2/models/simple/infer takes POST, got GET' });
    expect((await fetch(`${fx.url}/v2/health/live`, { method: 'POST' })).status).toBe(405);
  });

  it('keeps a keep-alive connection serving after errors', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const sockets = new Set<unknown>();
      agent.on('free', (socket) => sockets.add(socket));
      const statuses = [];
      for (const path of ['/v2/nothing', '/v2/models/simple/infer', '/v2/health/ready']) {
        const res = await httpRequest(fx.url, { method: 'POST', path, agent, headers: { 'content-type': 'application/json' }, body: '{"not json' });
        statuses.push(res.status);
      }
      expect(statuses).toEqual([404, 400, 405]);
      expect(sockets.size).toBe(1);
    } finally {
      agent.destroy();
    }
  });
});

describe('HTTP frontend: model repository extension', () => {
  let fx: HttpFixture;
  beforeAll(async () => {
    fx = await startHttpFixture({ simple: simpleModel, add: addModel, repeat: repeatModel, acc: accumulateModel }, { server: { modelControlMode: 'explicit', startupModels: ['simple'] } });
  });
  afterAll(() => fx.stop());

  const index = async (body?: unknown) => {
    const res = await fetch(`${fx.url}/v2/repository/index`, body === undefined ? { method: 'POST' } : json(body));
    expect(res.status).toBe(200);
    return res.json();
  };

  it('lists every model of the repository, or only the ready ones', async () => {
    expect(await index()).toEqual([
      { name: 'acc', state: 'UNAVAILABLE', reason: 'not loaded' },
      { name: 'add', state: 'UNAVAILABLE', reason: 'not loaded' },
      { name: 'repeat', state: 'UNAVAILABLE', reason: 'not loaded' },
      { name: 'simple', version: '1', state: 'READY', reason: 'test backend (identity), version 1' },
    ]);
    expect(await index({ ready: true })).toEqual([{ name: 'simple', version: '1', state: 'READY', reason: 'test backend (identity), version 1' }]);
    const bad = await fetch(`${fx.url}/v2/repository/index`, json({ ready: 'yes' }));
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ error: "Invalid value for 'ready': expected a boolean" });
    // Nested past the depth limit, as Triton's test_repository_index_deeply_nested_json sends it: still only not a boolean.
    const deep = await fetch(`${fx.url}/v2/repository/index`, { method: 'POST', body: `{"ready":${'['.repeat(250_000)}true${']'.repeat(250_000)}}` });
    expect(deep.status).toBe(400);
    expect(await deep.json()).toEqual({ error: "Invalid value for 'ready': expected a boolean" });
  });

  it('loads and unloads models, with a config override passed as a JSON string', async () => {
    const load = await fetch(`${fx.url}/v2/repository/models/add/load`, { method: 'POST' });
    expect(load.status).toBe(200);
    expect((await fetch(`${fx.url}/v2/models/add/ready`)).status).toBe(200);

    // The override makes 'repeat' a non-decoupled identity on FP32 [2].
    const config = {
      backend: 'test',
      input: [{ name: 'IN', data_type: 'TYPE_FP32', dims: [2] }],
      output: [{ name: 'OUT', data_type: 'TYPE_FP32', dims: [2] }],
      parameters: { behavior: { string_value: 'identity' } },
    };
    const overridden = await fetch(`${fx.url}/v2/repository/models/repeat/load`, json({ parameters: { config: JSON.stringify(config) } }));
    expect(overridden.status).toBe(200);
    const metadata = (await (await fetch(`${fx.url}/v2/models/repeat`)).json()) as { inputs: unknown[] };
    expect(metadata.inputs).toEqual([{ name: 'IN', datatype: 'FP32', shape: [2] }]);

    const unload = await fetch(`${fx.url}/v2/repository/models/add/unload`, { method: 'POST' });
    expect(unload.status).toBe(200);
    expect((await fetch(`${fx.url}/v2/models/add/ready`)).status).not.toBe(200);
  });

  it('loads back the configuration it gives: GET .../config, then that text as the config of a load', async () => {
    for (const model of ['simple', 'acc']) {
      expect((await fetch(`${fx.url}/v2/repository/models/${model}/load`, { method: 'POST' })).status).toBe(200);
      const given = await (await fetch(`${fx.url}/v2/models/${model}/config`)).text();
      const load = await fetch(`${fx.url}/v2/repository/models/${model}/load`, json({ parameters: { config: given } }));
      expect(load.status, `${model}: ${await load.clone().text()}`).toBe(200);
      expect(await (await fetch(`${fx.url}/v2/models/${model}/config`)).text()).toBe(given);
    }
  });

  it('refuses bad load and unload requests, saying why', async () => {
    const cases: Array<[string, unknown, number, string]> = [
      // An override the load cannot read fails it as Triton's does: 500, its words first.
      ['load', { parameters: { config: '{not json' } }, 500, "failed to load 'simple', failed to poll from model repository: Invalid config override: load parameter 'config' is not JSON"],
      ['load', { parameters: { config: '[1]' } }, 500, "Invalid config override: load parameter 'config' does not fit a ModelConfig: config must be a JSON object, got an array"],
      ['load', { parameters: { config: '{"constructor": {}}' } }, 500, "Invalid config override: load parameter 'config': config has no field 'constructor'"],
      ['load', { parameters: { config: 7 } }, 400, "load parameter 'config' must be a string, got number 7"],
      ['load', { parameters: { 'file:1/model.test': 'AAAA' } }, 500, "failed to load 'simple', failed to poll from model repository: Load parameter 'config' must be specified for model file override"],
      ['load', { parameters: { config: '{}', 'file:1/model.test': 'not base64!' } }, 400, "load parameter 'file:1/model.test' must be base64 text"],
      ['load', { parameters: { colour: 'blue' } }, 400, "unknown load parameter 'colour'"],
      ['load', { parameters: { config: JSON.stringify({ max_batch_size: 'many' }) } }, 500, 'config.max_batch_size must be an integer'],
      ['unload', { parameters: { unload_dependents: 1 } }, 400, "'unload_dependents' must be a boolean"],
    ];
    for (const [action, body, status, message] of cases) {
      const res = await fetch(`${fx.url}/v2/repository/models/simple/${action}`, json(body));
      expect(res.status, JSON.stringify(body)).toBe(status);
      expect(((await res.json()) as { error: string }).error).toContain(message);
    }
    const named = await fetch(`${fx.url}/v2/repository/elsewhere/models/simple/load`, { method: 'POST' });
    expect(named.status).toBe(501);
    expect(await named.json()).toEqual({ error: "'repository_name' specification is not supported" });
    const missing = await fetch(`${fx.url}/v2/repository/models/ghost/load`, { method: 'POST' });
    expect(missing.status).toBe(500);
    expect(((await missing.json()) as { error: string }).error).toBe(
      "failed to load 'ghost', failed to poll from model repository: model 'ghost' is not in the model repository",
    );
    expect((await fetch(`${fx.url}/v2/models/simple/ready`)).status).toBe(200);
  });
});

describe('HTTP frontend: starting and closing', () => {
  let repository: TempRepository | undefined;
  let server: InferenceServer | undefined;
  afterEach(async () => {
    await server?.stop();
    await repository?.remove();
    server = repository = undefined;
  });

  const serve = async () => {
    const slow = testConfig({ extra: 'parameters { key: "delay_ms" value { string_value: "300" } }' });
    repository = await TempRepository.create({ simple: simpleModel, slow: { config: slow }, repeat: repeatModel });
    server = await InferenceServer.start({ modelRepository: repository.path, backends: [testBackend(newProbe())] });
    return server;
  };

  it('refuses a bad bodyLimitBytes and a port in use, saying why', async () => {
    const server = await serve();
    await expect(startHttpFrontend(server, { host: '127.0.0.1', port: 0, bodyLimitBytes: 0 })).rejects.toThrow('HTTP frontend option `bodyLimitBytes` must be an integer from 1 to');
    await expect(startHttpFrontend(server, { host: '127.0.0.1', port: 70_000 })).rejects.toThrow('HTTP frontend option `port` must be an integer from 0 to 65535, got 70000');
    await expect(startHttpFrontend(server, { host: '127.0.0.1', port: 0, closeTimeoutMs: -1 })).rejects.toThrow('HTTP frontend option `closeTimeoutMs` must be an integer');
    const first = await startHttpFrontend(server, { host: '127.0.0.1', port: 0 });
    await expect(startHttpFrontend(server, { host: '127.0.0.1', port: first.port })).rejects.toThrow(`socket '127.0.0.1:${first.port}' already in use`);
    await first.close();
  });

  it('lets a request in flight finish on close, closes idle keep-alive connections, and stops listening', async () => {
    const server = await serve();
    const frontend = await startHttpFrontend(server, { host: '127.0.0.1', port: 0 });
    const url = `http://127.0.0.1:${frontend.port}`;
    const agent = new Agent({ keepAlive: true });
    // An idle keep-alive connection, and a request that takes 300 ms.
    expect((await httpRequest(url, { method: 'GET', path: '/v2/health/live', agent })).status).toBe(200);
    const inputs = [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }];
    const slow = httpRequest(url, { path: '/v2/models/slow/infer', agent, body: JSON.stringify({ inputs }) });
    await sleep(50);
    await frontend.close();
    const answer = await slow;
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body.toString()).outputs[0].data).toEqual([1, 2, 3, 4]);
    await expect(fetch(`${url}/v2/health/live`)).rejects.toThrow();
    agent.destroy();
  });

  it('keeps answering probes while the server stops: not ready (400), then not live', async () => {
    const server = await serve();
    const frontend = await startHttpFrontend(server, { host: '127.0.0.1', port: 0 });
    const url = `http://127.0.0.1:${frontend.port}`;
    const inputs = [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }];
    const slow = fetch(`${url}/v2/models/slow/infer`, json({ inputs }));
    await sleep(50);
    const stopping = server.stop();
    expect((await fetch(`${url}/v2/health/ready`)).status).toBe(400);
    expect((await fetch(`${url}/v2/health/live`)).status).toBe(400);
    expect((await slow).status).toBe(200);
    await stopping;
    await frontend.close();
  });

  const slowRequest = () => {
    const body = JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }] });
    return `POST /v2/models/slow/infer HTTP/1.1\r\nHost: test\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  };

  it('answers a request that finishes while it closes with Connection: close, then ends that connection', async () => {
    const server = await serve();
    const frontend = await startHttpFrontend(server, { host: '127.0.0.1', port: 0 });
    const answer = rawExchange(`http://127.0.0.1:${frontend.port}`, slowRequest());
    await sleep(50);
    await frontend.close();
    const text = await answer;
    expect(text).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(text).toMatch(/\r\nConnection: close\r\n/);
  });

  it('does not wait on a client stalled halfway through sending its request, nor on one still sending its headers', async () => {
    const server = await serve();
    const frontend = await startHttpFrontend(server, { host: '127.0.0.1', port: 0 });
    const stalled = connect(frontend.port, '127.0.0.1', () => stalled.write('POST /v2/models/simple/infer HTTP/1.1\r\nHost: test\r\nContent-Length: 1000\r\n\r\n{"inputs"'));
    const partial = connect(frontend.port, '127.0.0.1', () => partial.write('POST /v2/models/simple/infer HTTP/1.1\r\nHost: test\r\n'));
    const closed = Promise.all([stalled, partial].map((socket) => new Promise((resolve) => socket.on('error', () => {}).on('close', resolve))));
    await sleep(100);
    const started = performance.now();
    await frontend.close();
    expect(performance.now() - started).toBeLessThan(2000);
    await closed;
  });

  it('cuts off what still runs closeTimeoutMs after close(), a stream among them, cancelling it', async () => {
    const server = await serve();
    const frontend = await startHttpFrontend(server, { host: '127.0.0.1', port: 0, closeTimeoutMs: 300 });
    const res = await fetch(`http://127.0.0.1:${frontend.port}/v2/models/repeat/generate_stream`, { method: 'POST', body: JSON.stringify({ IN: 1, count: 1000, interval_ms: 10 }) });
    const reader = res.body!.getReader();
    await reader.read();
    const started = performance.now();
    await frontend.close();
    const took = performance.now() - started;
    expect(took).toBeGreaterThanOrEqual(280);
    expect(took).toBeLessThan(3000);
    await expect((async () => { while (!(await reader.read()).done); })()).rejects.toThrow();
    const failures = () => server.statistics('repeat').model_stats[0]!.inference_stats.fail.count;
    await expect.poll(failures, { timeout: 5000 }).toBe(1);
  });

  it('leaves no shared-memory registration behind when it cannot listen', async () => {
    const server = await serve();
    const first = await startHttpFrontend(server, { host: '127.0.0.1', port: 0, allowClientSharedMemory: true });
    await expect(startHttpFrontend(server, { host: '127.0.0.1', port: first.port })).rejects.toThrow('already in use');
    const key = `/tritium-test-${randomUUID()}`;
    writeFileSync(`/dev/shm${key}`, new Uint8Array(64));
    try {
      const register = await fetch(`http://127.0.0.1:${first.port}/v2/systemsharedmemory/region/r/register`, json({ key, byte_size: 8 }));
      expect(register.status).toBe(200);
      await first.close();
      // The last frontend of the server closed: a frontend opening now starts with no regions.
      const next = attachSharedMemory(server, 'HTTP frontend', {}, 1024);
      expect(next.memory.status()).toEqual([]);
      next.release();
    } finally {
      rmSync(`/dev/shm${key}`, { force: true });
    }
  });
});
