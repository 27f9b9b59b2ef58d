import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Metadata, status } from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_TRACE_SETTINGS } from '@tritium/core';
import { expectStatus, useGrpcFixture } from './helpers/grpc-fixture.js';
import { SIMPLE } from './helpers/grpc-models.js';
import { startHttpFixture, type HttpFixture } from './helpers/http-fixture.js';
import { simpleModel } from './helpers/http-models.js';
import { startOtlpCollector, type OtlpCollector } from '../../core/test/helpers/otlp-collector.js';

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
    // The frontend's receive activities come before the trace's own entries, its send activities after them (as Triton's).
    expect(entries[2]).toEqual({ id: 1, model_name: 'simple', model_version: 1, request_id: 'h1' });
    expect(entries.filter((e) => e.timestamps).map((e) => e.timestamps![0]!.name)).toEqual([
      'HTTP_RECV_START',
      'HTTP_RECV_END',
      'REQUEST_START',
      'QUEUE_START',
      'COMPUTE_START',
      'COMPUTE_END',
      'REQUEST_END',
      'INFER_RESPONSE_COMPLETE',
      'HTTP_SEND_START',
      'HTTP_SEND_END',
    ]);
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
      ['/v2/trace/setting', '{"trace_mode":"opentelemetry"}', 501, /^trace_mode is chosen when the server starts: it traces in mode 'triton'/],
      ['/v2/trace/setting', '{"url":"http://x:4318/v1/traces"}', 501, /^OpenTelemetry trace setting 'url' is set when the server starts/],
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

const CALLER_TRACE_ID = '0af7651916cd43dd8448eb211c12666c';
const CALLER_SPAN_ID = 'b7ad6b7169242424';
const TRACEPARENT = `00-${CALLER_TRACE_ID}-${CALLER_SPAN_ID}-01`;

describe('OpenTelemetry mode over HTTP and gRPC', () => {
  let collector: OtlpCollector;
  beforeEach(async () => {
    collector = await startOtlpCollector();
  });
  afterEach(() => collector.close());
  const openTelemetry = () => ({
    trace: { trace_mode: 'opentelemetry' as const, trace_level: ['TIMESTAMPS'] as const, trace_rate: 1, opentelemetry: { url: collector.url, resource: { 'test.key': 'test.value', 'service.name': 'test_triton' } } },
  });
  /** Triton's answer in OpenTelemetry mode: no log_frequency or trace_file; the export settings, as strings. */
  const answer = () => ({
    trace_level: ['TIMESTAMPS'],
    trace_rate: '1',
    trace_count: '-1',
    trace_mode: 'opentelemetry',
    url: collector.url,
    resource: ['test.key=test.value', 'service.name=test_triton'],
    bsp_max_queue_size: '2048',
    bsp_schedule_delay: '5000',
    bsp_max_export_batch_size: '512',
  });

  describe('HTTP', () => {
    let fx: HttpFixture | undefined;
    afterEach(async () => {
      await fx?.stop();
      fx = undefined;
    });
    const post = (path: string, body: string) => fetch(`${fx!.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

    it("answers the settings as Triton does in that mode, and refuses what does not apply to it", async () => {
      fx = await startHttpFixture({ simple: simpleModel }, { server: openTelemetry() });
      expect(await (await fetch(`${fx.url}/v2/trace/setting`)).json()).toEqual(answer());
      expect(await (await post('/v2/models/simple/trace/setting', '{"trace_rate":"3"}')).json()).toEqual({ ...answer(), trace_rate: '3' });
      const cases: Array<[string, number, RegExp]> = [
        ['{"log_frequency":"2"}', 400, /^trace setting 'log_frequency' applies to trace mode 'triton' only/],
        ['{"trace_file":"/tmp/t.json"}', 501, /^trace file location can not be updated through network protocol$/],
        ['{"trace_level":["TENSORS"]}', 400, /^Attempting to set invalid trace setting :trace level TENSORS is not supported in trace mode 'opentelemetry'$/],
        ['{"trace_mode":"triton"}', 501, /it traces in mode 'opentelemetry'/],
        ['{"bsp_schedule_delay":"1"}', 501, /^OpenTelemetry trace setting 'bsp_schedule_delay' is set when the server starts/],
      ];
      for (const [body, code, message] of cases) {
        const res = await post('/v2/trace/setting', body);
        expect([body, res.status, ((await res.json()) as { error: string }).error]).toEqual([body, code, expect.stringMatching(message)]);
      }
    });

    it("continues the client's traceparent, with the HTTP activities on the InferRequest span, exported when the server stops", async () => {
      fx = await startHttpFixture({ simple: simpleModel }, { server: openTelemetry() });
      const body = JSON.stringify({ id: 'h1', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }] });
      const traced = await fetch(`${fx.url}/v2/models/simple/infer`, { method: 'POST', headers: { 'content-type': 'application/json', traceparent: TRACEPARENT, tracestate: 'vendor=x' }, body });
      expect(traced.status).toBe(200);
      await fx.stop();
      fx = undefined;
      const spans = collector.spans;
      expect(spans.map((span) => span.name).sort()).toEqual(['InferRequest', 'compute', 'simple']);
      const root = spans.find((span) => span.name === 'InferRequest')!;
      expect(root).toMatchObject({ traceId: CALLER_TRACE_ID, parentSpanId: CALLER_SPAN_ID, traceState: 'vendor=x' });
      expect(root.events.map((event) => event.name)).toEqual(['HTTP_RECV_START', 'HTTP_RECV_END', 'INFER_RESPONSE_COMPLETE', 'HTTP_SEND_START', 'HTTP_SEND_END']);
      const model = spans.find((span) => span.name === 'simple')!;
      expect(model).toMatchObject({ traceId: CALLER_TRACE_ID, parentSpanId: root.spanId });
      expect(model.attributes).toMatchObject({ 'triton.model_name': 'simple', 'triton.request_id': 'h1' });
      expect(model.resource).toMatchObject({ 'service.name': 'test_triton', 'test.key': 'test.value' });
    });
  });

  describe('gRPC', () => {
    const fx = useGrpcFixture();
    const values = (settings: Record<string, string | string[]>) => Object.fromEntries(Object.entries(settings).map(([name, value]) => [name, { value: typeof value === 'string' ? [value] : value }]));

    it("answers TraceSetting with the export settings as SettingValues, a value per resource as Triton's", async () => {
      const client = await fx.start({ simple: SIMPLE }, openTelemetry());
      expect(await client.call('TraceSetting', {})).toEqual({ settings: values(answer()) });
      await expectStatus(client.call('TraceSetting', { settings: values({ log_frequency: '1' }) }), status.INVALID_ARGUMENT, /'log_frequency' applies to trace mode 'triton' only/);
      await expectStatus(client.call('TraceSetting', { settings: values({ url: 'http://x' }) }), status.UNIMPLEMENTED, /is set when the server starts/);
    });

    it("continues the client's traceparent from the call's metadata, with the gRPC activities on the InferRequest span", async () => {
      const client = await fx.start({ simple: SIMPLE }, openTelemetry());
      const metadata = new Metadata();
      metadata.set('traceparent', TRACEPARENT);
      const request = { model_name: 'simple', id: 'g1', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], contents: { fp32_contents: [1, 2, 3, 4] } }] };
      await new Promise((resolve, reject) => client.inference.ModelInfer!(request, metadata, (error: Error | null, response: unknown) => (error ? reject(error) : resolve(response))));
      await fx.server!.stop();
      const root = collector.spans.find((span) => span.name === 'InferRequest')!;
      expect(root).toMatchObject({ traceId: CALLER_TRACE_ID, parentSpanId: CALLER_SPAN_ID });
      expect(root.events.map((event) => event.name)).toEqual(['GRPC_WAITREAD_START', 'GRPC_WAITREAD_END', 'INFER_RESPONSE_COMPLETE', 'GRPC_SEND_START', 'GRPC_SEND_END']);
      expect(collector.spans.find((span) => span.name === 'simple')).toMatchObject({ traceId: CALLER_TRACE_ID, parentSpanId: root.spanId });
    });
  });
});
