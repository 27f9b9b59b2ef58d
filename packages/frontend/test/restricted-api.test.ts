import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Metadata, status, type ClientReadableStream, type ServiceError, type StatusObject } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '@tritium/core';
import { parseCommandLine, UsageError, type ServeOptions } from '../src/cli/arguments.js';
import { serve, type RunningService } from '../src/cli/serve.js';
import { loadServiceDefinitions } from '../src/grpc/proto-definitions.js';
import { RPC_CATEGORIES } from '../src/grpc/restricted-rpcs.js';
import { ApiRestrictions, parseRestrictedApis, type RestrictedApis } from '../src/restricted-api.js';
import { GrpcClient, expectStatus, raw, useGrpcFixture, type Message, type RpcClient } from './helpers/grpc-fixture.js';
import { SIMPLE } from './helpers/grpc-models.js';
import { startHttpFixture } from './helpers/http-fixture.js';
import { simpleModel } from './helpers/http-models.js';

const ADMIN: RestrictedApis = { 'model-repository': { key: 'admin-key', value: 'secret' }, 'shared-memory': { key: 'admin-key', value: 'secret' } };
const HTTP_REFUSAL = { error: "This API is restricted, expecting header 'admin-key'" };
const GRPC_REFUSAL = "This protocol is restricted, expecting header 'triton-grpc-protocol-admin-key'";

describe('parseRestrictedApis', () => {
  it("reads Triton's <category>,...:<key>=<value> groups, the value being all after the first '='", () => {
    expect(parseRestrictedApis('http-restricted-api', ['model-repository,shared-memory:admin-key=a=b:c', 'inference:user-key=u'])).toEqual({
      'model-repository': { key: 'admin-key', value: 'a=b:c' },
      'shared-memory': { key: 'admin-key', value: 'a=b:c' },
      inference: { key: 'user-key', value: 'u' },
    });
    expect(parseRestrictedApis('http-restricted-api', [])).toEqual({});
  });

  it.each([
    ['health', "--http-restricted-api takes <api>,<api>...:<key>=<value>, got 'health'"],
    ['health:key', "--http-restricted-api takes <api>,<api>...:<key>=<value>, got 'health:key'"],
    [':key=value', "--http-restricted-api takes <api>,<api>...:<key>=<value>, got ':key=value'"],
    ['health:=value', "--http-restricted-api takes <api>,<api>...:<key>=<value>, got 'health:=value'"],
    ['health:key=', "--http-restricted-api takes <api>,<api>...:<key>=<value>, got 'health:key='"],
    ['health,infer:key=value', "--http-restricted-api: unknown restricted api 'infer' (known: health, metadata, inference, shared-memory, model-config, model-repository, statistics, trace, logging)"],
    ['health,,metadata:key=value', "--http-restricted-api: unknown restricted api ''"],
    ['health,health:key=value', "--http-restricted-api: restricted api 'health' can not be specified in multiple config groups"],
  ])('refuses %j', (spec, message) => {
    expect(() => parseRestrictedApis('http-restricted-api', [spec])).toThrow(message);
  });

  it('refuses a category in two groups, calling them protocols for gRPC', () => {
    expect(() => parseRestrictedApis('grpc-restricted-protocol', ['trace:a=1', 'logging,trace:b=2'])).toThrow(
      "--grpc-restricted-protocol: restricted protocol 'trace' can not be specified in multiple config groups",
    );
  });
});

describe('ApiRestrictions', () => {
  const headers = (values: Record<string, string>) => (name: string) => values[name];

  it('lets a call of an open category through, and one of a restricted category only with its exact header value', () => {
    const restrictions = new ApiRestrictions('HTTP frontend', { statistics: { key: 'Stats-Key', value: 'v' } });
    expect(restrictions.missingHeader('inference', headers({}))).toBeUndefined();
    // Header names are case-insensitive: they arrive lower-cased.
    expect(restrictions.missingHeader('statistics', headers({ 'stats-key': 'v' }))).toBeUndefined();
    for (const value of [undefined, '', 'V', 'vv', ' v']) {
      expect(restrictions.missingHeader('statistics', headers(value === undefined ? {} : { 'stats-key': value }))).toBe('Stats-Key');
    }
    expect(new ApiRestrictions('gRPC frontend', { trace: { key: 'k', value: 'v' } }, 'triton-grpc-protocol-').missingHeader('trace', headers({}))).toBe('triton-grpc-protocol-k');
  });

  it('refuses a malformed option', () => {
    expect(() => new ApiRestrictions('HTTP frontend', { admin: { key: 'k', value: 'v' } } as RestrictedApis)).toThrow("HTTP frontend option `restrictedApis`: unknown category 'admin'");
    expect(() => new ApiRestrictions('HTTP frontend', { health: { key: '', value: 'v' } })).toThrow("'health' needs a non-empty key and value");
    expect(() => new ApiRestrictions('HTTP frontend', { health: { key: 'k' } } as unknown as RestrictedApis)).toThrow("'health' needs a non-empty key and value");
  });
});

describe('HTTP frontend with restricted APIs', () => {
  it("refuses a restricted call without its header with Triton's 403, before checking the method, and serves it with the header", async () => {
    const fx = await startHttpFixture({ simple: simpleModel }, { server: { modelControlMode: 'explicit' }, frontend: { restrictedApis: ADMIN } });
    try {
      const load = (headers: Record<string, string> = {}, method = 'POST') => fetch(`${fx.url}/v2/repository/models/simple/load`, { method, headers });
      for (const refused of [await load(), await load({ 'admin-key': 'wrong' }), await load({}, 'GET')]) {
        expect(refused.status).toBe(403);
        expect(refused.headers.get('content-type')).toBe('application/json');
        expect(await refused.json()).toEqual(HTTP_REFUSAL);
      }
      expect(await fx.server.isModelReady('simple')).toBe(false);
      expect((await fetch(`${fx.url}/v2/systemsharedmemory/status`)).status).toBe(403);

      expect((await load({ 'Admin-Key': 'secret' })).status).toBe(200);
      expect(await fx.server.isModelReady('simple')).toBe(true);
      expect((await load({ 'admin-key': 'secret' }, 'GET')).status).toBe(405);
      expect((await fetch(`${fx.url}/v2/systemsharedmemory/status`, { headers: { 'admin-key': 'secret' } })).status).toBe(200);

      // Other categories stay open.
      expect((await fetch(`${fx.url}/v2/health/ready`)).status).toBe(200);
      expect((await fetch(`${fx.url}/v2/models/simple/config`)).status).toBe(200);
      const infer = await fetch(`${fx.url}/v2/models/simple/infer`, { method: 'POST', body: JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }] }) });
      expect(infer.status).toBe(200);
      // An unknown path is 404 whatever is restricted.
      expect((await fetch(`${fx.url}/v2/repository/nothing`)).status).toBe(404);
    } finally {
      await fx.stop();
    }
  });

  it('maps each route to its category as Triton does', async () => {
    const restrictedApis = { health: { key: 'h', value: '1' }, metadata: { key: 'm', value: '1' }, 'model-config': { key: 'c', value: '1' }, statistics: { key: 's', value: '1' }, inference: { key: 'i', value: '1' }, logging: { key: 'l', value: '1' } };
    const fx = await startHttpFixture({ simple: simpleModel }, { frontend: { restrictedApis } });
    try {
      const routes: Array<[string, string]> = [
        ['/v2/health/live', 'h'],
        ['/v2/models/simple/ready', 'h'],
        ['/v2', 'm'],
        ['/v2/models/simple', 'm'],
        ['/v2/models/simple/config', 'c'],
        ['/v2/models/stats', 's'],
        ['/v2/models/simple/stats', 's'],
        ['/v2/models/simple/infer', 'i'],
        ['/v2/models/simple/generate', 'i'],
        ['/v2/logging', 'l'],
      ];
      for (const [path, header] of routes) {
        const res = await fetch(`${fx.url}${path}`);
        expect([path, res.status, await res.json()]).toEqual([path, 403, { error: `This API is restricted, expecting header '${header}'` }]);
      }
      expect((await fetch(`${fx.url}/v2/repository/index`, { method: 'POST' })).status).toBe(200);
      expect((await fetch(`${fx.url}/v2/logging`, { method: 'POST', headers: { l: '1' }, body: '{"log_info":true}' })).status).toBe(200);
    } finally {
      await fx.stop();
    }
  });
});

/** A unary call sending `metadata`. */
function callWith(client: RpcClient, rpc: string, request: object, metadata: Record<string, string>): Promise<Message> {
  const call = client[rpc];
  if (call === undefined) return Promise.reject(new Error(`the client has no rpc '${rpc}'`));
  const sent = new Metadata();
  for (const [key, value] of Object.entries(metadata)) sent.set(key, value);
  return new Promise((resolve, reject) => call.call(client, request, sent, (error: ServiceError | null, response: Message) => (error ? reject(error) : resolve(response))));
}

const ADMIN_METADATA = { 'triton-grpc-protocol-admin-key': 'secret' };

describe('gRPC frontend with restricted protocols', () => {
  const fx = useGrpcFixture();

  it("refuses a restricted rpc without its metadata with Triton's UNAVAILABLE, and serves it with the metadata", async () => {
    const client = await fx.start({ m: SIMPLE }, { modelControlMode: 'explicit' }, { restrictedApis: ADMIN });
    await expectStatus(client.call('RepositoryModelLoad', { model_name: 'm' }), status.UNAVAILABLE, GRPC_REFUSAL);
    // The key alone is not the header: gRPC's carries Triton's prefix.
    await expectStatus(callWith(client.inference, 'RepositoryModelLoad', { model_name: 'm' }, { 'admin-key': 'secret' }), status.UNAVAILABLE, GRPC_REFUSAL);
    await expectStatus(callWith(client.inference, 'RepositoryModelLoad', { model_name: 'm' }, { 'triton-grpc-protocol-admin-key': 'nope' }), status.UNAVAILABLE, GRPC_REFUSAL);
    await expectStatus(client.call('SystemSharedMemoryStatus'), status.UNAVAILABLE, GRPC_REFUSAL);
    expect(await fx.server!.isModelReady('m')).toBe(false);

    await callWith(client.inference, 'RepositoryModelLoad', { model_name: 'm' }, ADMIN_METADATA);
    expect(await client.call('ModelReady', { name: 'm' })).toEqual({ ready: true });
    expect(await callWith(client.inference, 'SystemSharedMemoryStatus', {}, ADMIN_METADATA)).toEqual({ regions: {} });
    // Other protocols stay open.
    expect(await client.call('ServerLive')).toEqual({ live: true });
    expect(await client.check()).toEqual({ status: 'SERVING' });
    const response = await client.call('ModelInfer', { model_name: 'm', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4] }], raw_input_contents: [raw(Float32Array.from([1, 2, 3, 4]))] });
    expect(response.outputs).toHaveLength(1);
  });

  it('ends a restricted ModelStreamInfer with UNAVAILABLE, and restricts the health check with health, LogSettings with logging', async () => {
    const client = await fx.start({ m: SIMPLE }, {}, { restrictedApis: { inference: { key: 'k', value: 'v' }, health: { key: 'h', value: 'v' }, logging: { key: 'l', value: 'v' } } });
    const stream = client.stream();
    stream.on('error', () => {});
    stream.on('data', () => {});
    // Closed at once from this side: an open stream would end OK, a refused one ends with the refusal.
    stream.end();
    const ended = await new Promise<StatusObject>((resolve) => stream.on('status', resolve));
    expect({ code: ended.code, details: ended.details }).toEqual({ code: status.UNAVAILABLE, details: "This protocol is restricted, expecting header 'triton-grpc-protocol-k'" });
    await expectStatus(client.call('ModelInfer', { model_name: 'm' }), status.UNAVAILABLE, "expecting header 'triton-grpc-protocol-k'");
    await expectStatus(client.check(), status.UNAVAILABLE, "expecting header 'triton-grpc-protocol-h'");
    const watch = client.health.Watch!({ service: '' }) as ClientReadableStream<unknown>;
    watch.on('error', () => {});
    watch.on('data', () => {});
    const watchEnded = await new Promise<StatusObject>((resolve) => watch.on('status', resolve));
    expect({ code: watchEnded.code, details: watchEnded.details }).toEqual({ code: status.UNAVAILABLE, details: "This protocol is restricted, expecting header 'triton-grpc-protocol-h'" });
    await expectStatus(client.call('ServerReady'), status.UNAVAILABLE, "expecting header 'triton-grpc-protocol-h'");
    expect(await callWith(client.health, 'Check', { service: '' }, { 'triton-grpc-protocol-h': 'v' })).toEqual({ status: 'SERVING' });
    await expectStatus(client.call('LogSettings'), status.UNAVAILABLE, "expecting header 'triton-grpc-protocol-l'");
    expect((await callWith(client.inference, 'LogSettings', {}, { 'triton-grpc-protocol-l': 'v' })).settings.log_info).toEqual({ parameter_choice: 'bool_param', bool_param: true });
    expect((await client.call('ServerMetadata')).name).toBe('triton');
  });

  it('gives every rpc of both services a category', () => {
    const definitions = loadServiceDefinitions();
    const rpcs = [...Object.keys(definitions.inference), ...Object.keys(definitions.health)];
    expect(rpcs.filter((rpc) => !RPC_CATEGORIES[rpc])).toEqual([]);
  });
});

describe('tritium serve with restricted APIs', () => {
  const running: RunningService[] = [];
  const directories: string[] = [];
  afterEach(async () => {
    for (const { server, frontends } of running.splice(0)) {
      await Promise.all(frontends.map(({ frontend }) => frontend.close()));
      await server.stop();
    }
    await Promise.all(directories.splice(0).map((directory) => rm(directory, { recursive: true, force: true })));
  });

  const serveOptions = (...argv: string[]): ServeOptions => {
    const command = parseCommandLine(argv);
    if (command.kind !== 'serve') throw new Error(`expected serve, got ${command.kind}`);
    return command.options;
  };

  it('reads both flags, repeated, into each frontend', () => {
    const options = serveOptions('--model-repository=/m', '--http-restricted-api=model-repository:admin-key=secret', '--http-restricted-api=inference:k=v', '--grpc-restricted-protocol=shared-memory,trace:admin-key=secret');
    expect(options.http!.restrictedApis).toEqual({ 'model-repository': { key: 'admin-key', value: 'secret' }, inference: { key: 'k', value: 'v' } });
    expect(options.grpc!.restrictedApis).toEqual({ 'shared-memory': { key: 'admin-key', value: 'secret' }, trace: { key: 'admin-key', value: 'secret' } });
    // The same category may be restricted on both protocols.
    expect(() => serveOptions('--model-repository=/m', '--http-restricted-api=health:a=1', '--grpc-restricted-protocol=health:a=1')).not.toThrow();
  });

  it.each([
    [['--http-restricted-api=model-repository'], "--http-restricted-api takes <api>,<api>...:<key>=<value>, got 'model-repository'"],
    [['--http-restricted-api=health:a=1', '--http-restricted-api=health:b=2'], "--http-restricted-api: restricted api 'health' can not be specified in multiple config groups"],
    [['--grpc-restricted-protocol=admin:a=1'], "--grpc-restricted-protocol: unknown restricted protocol 'admin'"],
    // Read even with the service turned off, as Triton reads it.
    [['--allow-grpc=false', '--grpc-restricted-protocol=admin:a=1'], "--grpc-restricted-protocol: unknown restricted protocol 'admin'"],
  ])('refuses %j as a usage error', (argv, message) => {
    expect(() => parseCommandLine(['--model-repository=/m', ...argv])).toThrow(UsageError);
    expect(() => parseCommandLine(['--model-repository=/m', ...argv])).toThrow(message);
  });

  it('starts with both flags and gates each protocol', async () => {
    const repository = await mkdtemp(join(tmpdir(), 'tritium-restricted-'));
    directories.push(repository);
    const options = serveOptions(
      `--model-repository=${repository}`,
      '--http-address=127.0.0.1',
      '--grpc-address=127.0.0.1',
      '--http-port=0',
      '--grpc-port=0',
      '--allow-metrics=false',
      '--http-restricted-api=model-repository:admin-key=secret',
      '--grpc-restricted-protocol=model-repository:admin-key=secret',
    );
    const quiet: Logger = { error: () => {}, warn: () => {}, info: () => {}, verbose: () => {} };
    const service = await serve(options, quiet);
    running.push(service);
    const port = (name: string) => service.frontends.find((frontend) => frontend.name === name)!.frontend.port;

    const http = `http://127.0.0.1:${port('HTTPService')}/v2/repository/index`;
    expect((await fetch(http, { method: 'POST' })).status).toBe(403);
    expect((await fetch(http, { method: 'POST', headers: { 'admin-key': 'secret' } })).status).toBe(200);
    const grpc = new GrpcClient(port('GRPCInferenceService'));
    try {
      await expectStatus(grpc.call('RepositoryIndex'), status.UNAVAILABLE, GRPC_REFUSAL);
      expect(await callWith(grpc.inference, 'RepositoryIndex', {}, ADMIN_METADATA)).toEqual({ models: [] });
    } finally {
      grpc.close();
    }
  });
});
