import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_TRACE_SETTINGS } from '@tritium/core';
import { expectStatus, useGrpcFixture } from './helpers/grpc-fixture.js';
import { SIMPLE } from './helpers/grpc-models.js';
import { startHttpFixture, type HttpFixture } from './helpers/http-fixture.js';
import { simpleModel } from './helpers/http-models.js';

/** Triton's default answer to GET v2/trace/setting. */
const DEFAULTS = { trace_level: ['OFF'], trace_rate: '1000', trace_count: '-1', log_frequency: '0', trace_file: '', trace_mode: 'triton' };

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tritium-trace-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('HTTP v2/trace/setting', () => {
  let fx: HttpFixture | undefined;
  afterEach(async () => {
    await fx?.stop();
    fx = undefined;
  });
  const post = (path: string, body: string, headers: Record<string, string> = {}) => fetch(`${fx!.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  it('answers the global and model settings as strings, and changes them with POST (null clears a model setting)', async () => {
    const file = join(dir, 'trace.json');
    fx = await startHttpFixture({ simple: simpleModel }, { server: { trace: { trace_file: file } } });
    expect(await (await fetch(`${fx.url}/v2/trace/setting`)).json()).toEqual({ ...DEFAULTS, trace_file: file });
    expect((await fetch(`${fx.url}/v2`).then((r) => r.json()) as { extensions: string[] }).extensions).toContain('trace');
    const global = await post('/v2/trace/setting', '{"trace_level":["TIMESTAMPS"],"trace_rate":"1"}');
    expect([global.status, await global.json()]).toEqual([200, { ...DEFAULTS, trace_file: file, trace_level: ['TIMESTAMPS'], trace_rate: '1' }]);
    const model = await post('/v2/models/simple/trace/setting', '{"trace_rate":"5","trace_count":"10"}');
    expect(await model.json()).toEqual({ ...DEFAULTS, trace_file: file, trace_level: ['TIMESTAMPS'], trace_rate: '5', trace_count: '10' });
    const cleared = await post('/v2/models/simple/trace/setting', '{"trace_rate":null}');
    expect(await cleared.json()).toMatchObject({ trace_rate: '1', trace_count: '10' });
    // An empty body only reads.
    expect(await (await post('/v2/models/simple/trace/setting', '')).json()).toMatchObject({ trace_rate: '1', trace_count: '10' });
  });

  it('writes a trace file for requests served over HTTP', async () => {
    const file = join(dir, 'http.json');
    fx = await startHttpFixture({ simple: simpleModel }, { server: { trace: { trace_level: ['TIMESTAMPS'], trace_rate: 1, trace_file: file } } });
    const body = JSON.stringify({ id: 'h1', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }] });
    expect((await post('/v2/models/simple/infer', body)).status).toBe(200);
    await fx.stop();
    fx = undefined;
    const entries = JSON.parse(readFileSync(file, 'utf8')) as { id: number; request_id?: string; timestamps?: { name: string }[] }[];
    expect(entries[0]).toEqual({ id: 1, model_name: 'simple', model_version: 1, request_id: 'h1' });
    expect(entries.slice(1).map((e) => e.timestamps![0]!.name)).toEqual(['REQUEST_START', 'QUEUE_START', 'COMPUTE_START', 'COMPUTE_END', 'REQUEST_END']);
  });

  it("refuses as Triton does, naming the setting, and changes nothing", async () => {
    fx = await startHttpFixture({ simple: simpleModel });
    const cases: Array<[string, string, number, RegExp]> = [
      ['/v2/trace/setting', '{"trace_rate":"fast"}', 400, /^Unable to parse 'trace_rate', got: fast$/],
      ['/v2/trace/setting', '{"trace_rate":"4294967296"}', 400, /^Unable to parse 'trace_rate', value is out of range \[ 0, 4294967295 \], got: 4294967296$/],
      ['/v2/trace/setting', '{"trace_count":"-2"}', 400, /^Unable to parse 'trace_count'. Expecting value >= -1, got:-2$/],
      ['/v2/trace/setting', '{"log_frequency":5}', 400, /'log_frequency' must be a string/],
      ['/v2/trace/setting', '{"trace_level":["OFF","TIMESTAMPS"]}', 400, /'OFF' alone/],
      ['/v2/trace/setting', '{"trace_level":["LOUD"]}', 400, /'trace_level' must be/],
      ['/v2/trace/setting', '{"trace_level":["TIMESTAMPS"]}', 400, /^Attempting to set invalid trace setting :trace file name is not given$/],
      ['/v2/trace/setting', '{"trace_file":"/tmp/t.json"}', 501, /^trace file location can not be updated through network protocol$/],
      ['/v2/trace/setting', '{"trace_mode":"opentelemetry"}', 501, /OpenTelemetry mode is not built yet/],
      ['/v2/trace/setting', '{"trace_speed":"1"}', 400, /unknown trace setting 'trace_speed'/],
      ['/v2/models/nope/trace/setting', '{}', 400, /^Request for unknown model : nope$/],
      ['/v2/models/simple/versions/1/trace/setting', '{}', 400, /trace settings are per model/],
    ];
    for (const [path, body, code, message] of cases) {
      const res = await post(path, body);
      expect([body, res.status, ((await res.json()) as { error: string }).error]).toEqual([body, code, expect.stringMatching(message)]);
    }
    expect(fx.server.traceSettings()).toEqual(DEFAULT_TRACE_SETTINGS);
    const put = await fetch(`${fx.url}/v2/trace/setting`, { method: 'PUT' });
    expect([put.status, put.headers.get('allow')]).toEqual([405, 'GET, POST']);
    expect((await fetch(`${fx.url}/v2/trace/settings`)).status).toBe(404);
  });

  it("is restricted by the 'trace' category", async () => {
    fx = await startHttpFixture({ simple: simpleModel }, { frontend: { restrictedApis: { trace: { key: 'admin', value: 'yes' } } } });
    expect((await fetch(`${fx.url}/v2/trace/setting`)).status).toBe(403);
    expect((await fetch(`${fx.url}/v2/models/simple/trace/setting`)).status).toBe(403);
    expect((await fetch(`${fx.url}/v2/trace/setting`, { headers: { admin: 'yes' } })).status).toBe(200);
  });
});

describe('gRPC TraceSetting', () => {
  const fx = useGrpcFixture();
  const values = (settings: Record<string, string | string[]>) => Object.fromEntries(Object.entries(settings).map(([name, value]) => [name, { value: typeof value === 'string' ? [value] : value }]));

  it('answers and changes the global and model settings as SettingValues (no value clears one)', async () => {
    const file = join(dir, 'grpc.json');
    const client = await fx.start({ simple: SIMPLE }, { trace: { trace_file: file } });
    expect(await client.call('TraceSetting', {})).toEqual({ settings: values({ ...DEFAULTS, trace_file: file }) });
    const changed = await client.call('TraceSetting', { settings: values({ trace_level: ['TIMESTAMPS'], trace_rate: '2' }) });
    expect(changed.settings.trace_level).toEqual({ value: ['TIMESTAMPS'] });
    const model = await client.call('TraceSetting', { model_name: 'simple', settings: values({ trace_count: '3' }) });
    expect(model.settings).toMatchObject({ trace_rate: { value: ['2'] }, trace_count: { value: ['3'] } });
    const cleared = await client.call('TraceSetting', { model_name: 'simple', settings: { trace_count: {} } });
    expect(cleared.settings.trace_count).toEqual({ value: ['-1'] });
    expect(fx.server!.traceSettings('simple')).toEqual(fx.server!.traceSettings());
  });

  it('refuses with INVALID_ARGUMENT naming the setting, UNIMPLEMENTED for trace_file, as Triton', async () => {
    const client = await fx.start({ simple: SIMPLE });
    await expectStatus(client.call('TraceSetting', { settings: values({ trace_rate: 'x' }) }), status.INVALID_ARGUMENT, /^Unable to parse 'trace_rate', got: x$/);
    await expectStatus(client.call('TraceSetting', { settings: values({ trace_rate: ['1', '2'] }) }), status.INVALID_ARGUMENT, /^expect only 1 value for 'trace_rate'$/);
    await expectStatus(client.call('TraceSetting', { settings: values({ trace_size: '1' }) }), status.INVALID_ARGUMENT, /unknown trace setting 'trace_size'/);
    await expectStatus(client.call('TraceSetting', { settings: values({ trace_file: '/tmp/x' }) }), status.UNIMPLEMENTED, /can not be updated through network protocol/);
    await expectStatus(client.call('TraceSetting', { model_name: 'nope' }), status.INVALID_ARGUMENT, /^Request for unknown model : nope$/);
    expect(fx.server!.traceSettings()).toEqual(DEFAULT_TRACE_SETTINGS);
  });

  it("is restricted by the 'trace' category", async () => {
    const client = await fx.start({ simple: SIMPLE }, {}, { restrictedApis: { trace: { key: 'k', value: 'v' } } });
    await expectStatus(client.call('TraceSetting', {}), status.UNAVAILABLE, /restricted/);
  });
});
