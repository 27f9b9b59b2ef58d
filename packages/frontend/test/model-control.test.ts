import { createHash } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { status, type ClientReadableStream } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { InferenceError, InferenceServer, type Backend, type ServerOptions } from '@tritium/core';
import { startGrpcFrontend, startHttpFrontend } from '@tritium/frontend';
import type { RunningFrontend } from '../src/listen.js';
import { TempRepository, testConfig, TWO_STEP_ENSEMBLE, type TestModel } from '../../core/test/helpers/repository.js';
import { testBackend } from '../../core/test/helpers/test-backend.js';
import { expectStatus, GrpcClient, type Message } from './helpers/grpc-fixture.js';

// One server behind both frontends, so each feature is checked over HTTP and gRPC alike.
let repo: TempRepository | undefined;
let server: InferenceServer | undefined;
let frontends: RunningFrontend[] = [];
let client: GrpcClient | undefined;
let url = '';
afterEach(async () => {
  client?.close();
  for (const frontend of frontends) await frontend.close();
  await server?.stop();
  await repo?.remove();
  repo = server = client = undefined;
  frontends = [];
});

async function start(models: Record<string, TestModel>, options: Partial<ServerOptions> = {}): Promise<GrpcClient> {
  repo = await TempRepository.create(models);
  server = await InferenceServer.start({ modelRepository: repo.path, backends: [testBackend()], ...options });
  const http = await startHttpFrontend(server, { host: '127.0.0.1', port: 0 });
  const grpc = await startGrpcFrontend(server, { host: '127.0.0.1', port: 0 });
  frontends = [http, grpc];
  url = `http://127.0.0.1:${http.port}`;
  return (client = new GrpcClient(grpc.port));
}

const post = (path: string, body: object = {}) => fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
const ready = async () => (await server!.repositoryIndex()).filter((entry) => entry.state === 'READY').map((entry) => entry.name);
const EXPLICIT_ALL: Partial<ServerOptions> = { modelControlMode: 'explicit', startupModels: ['*'] };

describe('unload_dependents', () => {
  // `pair` uses first and second; `solo` uses third and second.
  const models = {
    first: { config: testConfig({}) },
    second: { config: testConfig({}) },
    third: { config: testConfig({}) },
    pair: { config: TWO_STEP_ENSEMBLE },
    solo: { config: TWO_STEP_ENSEMBLE.replace('model_name: "first"', 'model_name: "third"') },
  };

  it("over HTTP: an ensemble's models go with it unless another ensemble uses them; false unloads the model named only", async () => {
    await start(models, EXPLICIT_ALL);
    expect((await post('/v2/repository/models/solo/unload', { parameters: { unload_dependents: false } })).status).toBe(200);
    expect(await ready()).toEqual(['first', 'pair', 'second', 'third']);
    expect((await post('/v2/repository/models/pair/unload', { parameters: { unload_dependents: true } })).status).toBe(200);
    expect(await ready()).toEqual(['third']);
  });

  it("over gRPC: an ensemble's models go with it unless another ensemble uses them", async () => {
    const grpc = await start(models, EXPLICIT_ALL);
    await grpc.call('RepositoryModelUnload', { model_name: 'pair', parameters: { unload_dependents: { bool_param: true } } });
    expect(await ready()).toEqual(['second', 'solo', 'third']);
    await grpc.call('RepositoryModelUnload', { model_name: 'solo', parameters: { unload_dependents: { bool_param: true } } });
    expect(await ready()).toEqual([]);
  });
});

describe('model_repository_agents (checksum) through a load request', () => {
  it('refuses a model whose file digest differs, naming the file, over HTTP and gRPC', async () => {
    const content = JSON.stringify({ weights: [1, 2] });
    const md5 = (text: string) => createHash('md5').update(text).digest('hex');
    const config = (digest: string) => testConfig({ extra: `model_repository_agents { agents [ { name: "checksum" parameters { key: "MD5:1/model.test" value: "${digest}" } } ] }` });
    const grpc = await start({ m: { config: config(md5('other')), versions: { 1: content } } }, { modelControlMode: 'explicit' });
    const mismatch = `Mismatched MD5 hash for file 1/model.test, expect: ${md5('other')}, got: ${md5(content)}`;
    const answer = await post('/v2/repository/models/m/load');
    expect(answer.status).toBe(500);
    expect(await answer.json()).toEqual({ error: `failed to load 'm', failed to poll from model repository: ${mismatch}` });
    await expectStatus(grpc.call('RepositoryModelLoad', { model_name: 'm' }), status.INTERNAL, mismatch);
    await writeFile(join(repo!.path, 'm', 'config.pbtxt'), config(md5(content)));
    expect((await post('/v2/repository/models/m/load')).status).toBe(200);
    expect(await grpc.call('ModelReady', { name: 'm' })).toEqual({ ready: true });
  });
});

describe('model_repository_agents with model files sent in the load (file: parameters)', () => {
  it('checks the files sent, base64 over HTTP and bytes over gRPC, and loads them when their digests match', async () => {
    const content = JSON.stringify({ sent: true });
    const md5 = createHash('md5').update(content).digest('hex');
    const config = (digest: string) => JSON.stringify({ backend: 'test', input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [4] }], output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [4] }], model_repository_agents: { agents: [{ name: 'checksum', parameters: { 'MD5:1/model.test': digest } }] } });
    const grpc = await start({}, { modelControlMode: 'explicit' });
    const refused = await post('/v2/repository/models/sent/load', { parameters: { config: config('0'.repeat(32)), 'file:1/model.test': Buffer.from(content).toString('base64') } });
    expect(refused.status).toBe(500);
    expect(((await refused.json()) as { error: string }).error).toBe(`failed to load 'sent', failed to poll from model repository: Mismatched MD5 hash for file 1/model.test, expect: ${'0'.repeat(32)}, got: ${md5}`);
    await expectStatus(
      grpc.call('RepositoryModelLoad', { model_name: 'sent', parameters: { config: { string_param: config('1'.repeat(32)) }, 'file:1/model.test': { bytes_param: Buffer.from(content) } } }),
      status.INTERNAL,
      `Mismatched MD5 hash for file 1/model.test, expect: ${'1'.repeat(32)}, got: ${md5}`,
    );
    expect((await post('/v2/repository/models/sent/load', { parameters: { config: config(md5), 'file:1/model.test': Buffer.from(content).toString('base64') } })).status).toBe(200);
    await grpc.call('RepositoryModelLoad', { model_name: 'sent', parameters: { config: { string_param: config(md5) }, 'file:1/model.test': { bytes_param: Buffer.from(content) } } });
    expect(await grpc.call('ModelReady', { name: 'sent' })).toEqual({ ready: true });
  });
});

describe('--strict-readiness', () => {
  const models = { ok: { config: testConfig({}) }, broken: { config: testConfig({}), versions: { 1: JSON.stringify({ fail: 'bad weights' }) } } };

  it('strict (the default): not ready while a model failed to load, over HTTP and gRPC', async () => {
    const grpc = await start(models);
    expect((await fetch(`${url}/v2/health/ready`)).status).toBe(400);
    expect(await grpc.call('ServerReady')).toEqual({ ready: false });
    expect(await grpc.check()).toEqual({ status: 'NOT_SERVING' });
  });

  it('false: ready while live even though a model failed to load, over HTTP and gRPC', async () => {
    const grpc = await start(models, { strictReadiness: false });
    expect((await fetch(`${url}/v2/health/ready`)).status).toBe(200);
    expect(await grpc.call('ServerReady')).toEqual({ ready: true });
    expect(await grpc.check()).toEqual({ status: 'SERVING' });
    expect(await grpc.call('ModelReady', { name: 'broken' })).toEqual({ ready: false });
  });
});

describe('gRPC health Watch', () => {
  it('sends the status at once and again each time it changes, and ends when the frontend closes', async () => {
    const grpc = await start({ ok: { config: testConfig({}) }, broken: { config: testConfig({}), versions: { 1: JSON.stringify({ fail: 'bad weights' }) } } }, { modelControlMode: 'explicit', startupModels: ['ok'] });
    const call = grpc.health.Watch!({ service: '' }) as ClientReadableStream<Message>;
    const received = collect(call);
    await until(() => received.statuses.length === 1);
    await post('/v2/repository/models/broken/load');
    await until(() => received.statuses.length === 2);
    // Loading the good model again changes nothing the server's readiness depends on: no message.
    await post('/v2/repository/models/ok/load');
    await writeFile(join(repo!.path, 'broken', '1', 'model.test'), '{}');
    await post('/v2/repository/models/broken/load');
    await until(() => received.statuses.length === 3);
    for (const frontend of frontends) await frontend.close();
    await received.ended;
    expect(received.statuses).toEqual(['SERVING', 'NOT_SERVING', 'SERVING', 'NOT_SERVING']);
  });
});

describe('gRPC health Watch while the server stops', () => {
  it('hears NOT_SERVING as soon as stop() begins, with no model to unload', async () => {
    const grpc = await start({}, { modelControlMode: 'explicit' });
    const call = grpc.health.Watch!({ service: '' }) as ClientReadableStream<Message>;
    const received = collect(call);
    await until(() => received.statuses.length === 1);
    const stopped = server!.stop();
    await until(() => received.statuses.length === 2);
    expect(received.statuses).toEqual(['SERVING', 'NOT_SERVING']);
    await stopped;
  });
});

describe('--model-load-retry-count', () => {
  it('a load that fails once succeeds with one retry, over HTTP and gRPC', async () => {
    const backend = flakyBackend();
    const grpc = await start({ m: { config: testConfig({}) } }, { modelControlMode: 'explicit', backends: [backend], modelLoadRetryCount: 1 });
    backend.failNext = 1;
    expect((await post('/v2/repository/models/m/load')).status).toBe(200);
    backend.failNext = 1;
    await grpc.call('RepositoryModelLoad', { model_name: 'm' });
    expect(backend.attempts).toBe(4);
    backend.failNext = 2;
    await expectStatus(grpc.call('RepositoryModelLoad', { model_name: 'm' }), status.INVALID_ARGUMENT, /version 1 is at UNAVAILABLE state: passing fault;/);
    expect(await grpc.call('ModelReady', { name: 'm' })).toEqual({ ready: true });
  });
});

/** The test backend, whose next `failNext` model loads fail. */
function flakyBackend(): Backend & { failNext: number; attempts: number } {
  const base = testBackend();
  const flaky = {
    ...base,
    failNext: 0,
    attempts: 0,
    async createModel(context: Parameters<Backend['createModel']>[0]) {
      flaky.attempts++;
      if (flaky.failNext > 0) {
        flaky.failNext--;
        throw new InferenceError('UNAVAILABLE', 'passing fault');
      }
      return base.createModel(context);
    },
  };
  return flaky;
}

function collect(call: ClientReadableStream<Message>): { statuses: string[]; ended: Promise<void> } {
  const statuses: string[] = [];
  call.on('data', (message: Message) => statuses.push(message.status));
  const ended = new Promise<void>((resolve) => {
    call.on('end', resolve);
    call.on('error', () => resolve());
  });
  return { statuses, ended };
}

async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 10) {
    if (waited > 3000) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
