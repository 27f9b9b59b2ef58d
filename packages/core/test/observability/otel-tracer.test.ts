import { afterEach, describe, expect, it, vi } from 'vitest';
import { CallerTrace, InferenceServer, isObservingRequests, type Tensor } from '@tritium/core';
import { startChildRequest, type Backend } from '@tritium/core/backend';
import { openTelemetrySdkFor } from '../../src/observability/open-telemetry-sdk.js';
import { openTelemetrySettings } from '../../src/observability/open-telemetry-settings.js';
import { inferAsHttpFrontend } from '../helpers/http-caller.js';
import { startOtlpCollector, type CollectedSpan, type OtlpCollector } from '../helpers/otlp-collector.js';
import { testConfig, TWO_STEP_ENSEMBLE } from '../helpers/repository.js';
import { rejection, useServerFixture } from '../helpers/server-fixture.js';
import { newProbe, testBackend } from '../helpers/test-backend.js';

/** Which OpenTelemetry packages this file has loaded: each is recorded when first imported. */
const loaded = vi.hoisted(() => new Set<string>());
vi.mock('@opentelemetry/sdk-trace', async (importOriginal) => {
  loaded.add('@opentelemetry/sdk-trace');
  return importOriginal();
});
vi.mock('@opentelemetry/exporter-trace-otlp-proto', async (importOriginal) => {
  loaded.add('@opentelemetry/exporter-trace-otlp-proto');
  return importOriginal();
});

const fx = useServerFixture();
const input = (): Record<string, Tensor> => ({ INPUT0: { datatype: 'FP32', shape: [4], data: new Float32Array([1, 2, 3, 4]) } });
const CALLER_TRACE_ID = '0af7651916cd43dd8448eb211c12666c';
const CALLER_SPAN_ID = 'b7ad6b7169242424';

let collector: OtlpCollector | undefined;
afterEach(async () => {
  await collector?.close();
  collector = undefined;
});

/** Mode 'opentelemetry', tracing every request, exporting to the test's collector. */
async function tracingServer(models: Parameters<typeof fx.start>[0], trace: object = {}): Promise<InferenceServer> {
  collector = await startOtlpCollector();
  return fx.start(models, { trace: { trace_mode: 'opentelemetry', trace_level: ['TIMESTAMPS'], trace_rate: 1, opentelemetry: { url: collector.url, resource: { 'test.key': 'test.value' } }, ...trace } });
}

const named = (spans: readonly CollectedSpan[], name: string): CollectedSpan[] => spans.filter((span) => span.name === name);
const only = (spans: readonly CollectedSpan[], name: string): CollectedSpan => {
  const found = named(spans, name);
  expect(found.map((span) => span.name)).toEqual([name]);
  return found[0]!;
};
const events = (span: CollectedSpan) => span.events.map((event) => event.name);

describe('OpenTelemetry mode', () => {
  // First in the file: no test before it has loaded the SDK.
  it('loads nothing and subscribes to nothing with tracing off or in Triton mode', async () => {
    const server = await fx.start({ m: { config: testConfig({}) } });
    await server.infer('m', { inputs: input() });
    expect(isObservingRequests()).toBe(false);
    await server.stop();
    expect(await openTelemetrySdkFor({ trace_mode: 'triton', trace_level: ['TIMESTAMPS'] })).toBeUndefined();
    expect([...loaded]).toEqual([]);
  });

  it("exports one InferRequest span, a model span and a compute span per request, with Triton's names, events and attributes", async () => {
    const server = await tracingServer({ m: { config: testConfig({}) } });
    expect(isObservingRequests()).toBe(true);
    await server.infer('m', { inputs: input(), id: 'r1' });
    await server.stop();
    expect([...loaded].sort()).toEqual(['@opentelemetry/exporter-trace-otlp-proto', '@opentelemetry/sdk-trace']);
    const spans = collector!.spans;
    expect(collector!.contentTypes).toEqual(['application/x-protobuf']);
    const root = only(spans, 'InferRequest');
    const model = only(spans, 'm');
    const compute = only(spans, 'compute');
    expect([root.parentSpanId, model.parentSpanId, compute.parentSpanId]).toEqual(['', root.spanId, model.spanId]);
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
    expect(events(root)).toEqual([]);
    expect(events(model)).toEqual(['REQUEST_START', 'QUEUE_START', 'REQUEST_END']);
    expect(events(compute)).toEqual(['COMPUTE_START', 'COMPUTE_END']);
    expect(model.attributes).toEqual({ 'triton.model_name': 'm', 'triton.model_version': '1', 'triton.trace_id': '1', 'triton.trace_parent_id': '0', 'triton.request_id': 'r1' });
    // SERVER spans of Triton's tracer, and the resource with Triton's service name and the settings' attributes.
    expect(spans.map((span) => [span.kind, span.scope])).toEqual(spans.map(() => [2, 'triton-server']));
    expect(model.resource).toMatchObject({ 'service.name': 'triton-inference-server', 'test.key': 'test.value', 'telemetry.sdk.language': 'nodejs' });
    // Events in order, within their span, in epoch nanoseconds.
    const times = [...model.events.slice(0, 2), ...compute.events, model.events[2]!].map((event) => BigInt(event.timeUnixNano));
    expect(times).toEqual([...times].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(Number(times[0]! / 1_000_000n)).toBeGreaterThan(Date.now() - 60_000);
    expect(BigInt(root.startTimeUnixNano) <= times[0]! && BigInt(root.endTimeUnixNano) >= times.at(-1)!).toBe(true);
  });

  it("adds COMPUTE_INPUT_END and COMPUTE_OUTPUT_START to the compute span when the backend reports them", async () => {
    const reporting: Backend = {
      name: 'reporting',
      async createModel() {
        return {
          async createInstance() {
            return {
              async execute(requests, report) {
                report?.inputsReady();
                report?.outputsStarted();
                return requests.map((request) => ({ OUTPUT0: request.inputs.INPUT0! }));
              },
            };
          },
        };
      },
    };
    const config = 'backend: "reporting"\ninput { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] }\noutput { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] }';
    collector = await startOtlpCollector();
    const server = await fx.start({ r: { config } }, { backends: [reporting], trace: { trace_mode: 'opentelemetry', trace_level: ['TIMESTAMPS'], trace_rate: 1, opentelemetry: { url: collector.url } } });
    await server.infer('r', { inputs: input() });
    await server.stop();
    expect(events(only(collector!.spans, 'compute'))).toEqual(['COMPUTE_START', 'COMPUTE_INPUT_END', 'COMPUTE_OUTPUT_START', 'COMPUTE_END']);
  });

  it("continues a caller's W3C trace: same trace id, the caller's span as parent, its tracestate kept; traced whatever the rate", async () => {
    const server = await tracingServer({ m: { config: testConfig({}) } }, { trace_rate: 0 });
    expect(server.traceSettings()).toMatchObject({ trace_mode: 'opentelemetry', trace_rate: 0 });
    await server.infer('m', { inputs: input(), id: 'not traced: rate 0, no traceparent' });
    const trace = new CallerTrace({ traceparent: `00-${CALLER_TRACE_ID}-${CALLER_SPAN_ID}-00`, tracestate: 'vendor=x' });
    await server.infer('m', { inputs: input(), id: 'continued', trace });
    // A malformed traceparent starts no trace of its own at rate 0.
    await server.infer('m', { inputs: input(), trace: new CallerTrace({ traceparent: `00-${'0'.repeat(32)}-${CALLER_SPAN_ID}-01` }) });
    await server.stop();
    const spans = collector!.spans;
    const root = only(spans, 'InferRequest');
    expect(root).toMatchObject({ traceId: CALLER_TRACE_ID, parentSpanId: CALLER_SPAN_ID, traceState: 'vendor=x' });
    expect(only(spans, 'm').attributes['triton.request_id']).toBe('continued');
    expect(spans.every((span) => span.traceId === CALLER_TRACE_ID)).toBe(true);
  });

  it('puts the caller’s activities on the InferRequest span, and ends it when the caller ends', async () => {
    const server = await tracingServer({ m: { config: testConfig({}) } });
    const trace = await inferAsHttpFrontend(server, 'm', input());
    trace.end();
    // A caller that never ends: its root span is ended when the server stops.
    const unended = new CallerTrace({ endsAfterResponse: true });
    await server.infer('m', { inputs: input(), id: 'unended', trace: unended });
    await server.stop();
    const roots = named(collector!.spans, 'InferRequest');
    expect(roots.map(events)).toEqual([['HTTP_RECV_START', 'HTTP_RECV_END', 'HTTP_SEND_START', 'HTTP_SEND_END'], []]);
    const sendEnd = BigInt(roots[0]!.events[3]!.timeUnixNano);
    expect(BigInt(roots[0]!.endTimeUnixNano)).toBe(sendEnd);
    expect(BigInt(roots[0]!.startTimeUnixNano)).toBe(BigInt(roots[0]!.events[0]!.timeUnixNano));
  });

  it('ends the InferRequest spans still waiting for their caller when tracing goes off, as Triton mode writes its traces', async () => {
    const server = await tracingServer({ m: { config: testConfig({}) } });
    const unended = new CallerTrace({ endsAfterResponse: true });
    await server.infer('m', { inputs: input(), trace: unended });
    server.updateTraceSettings({ trace_level: ['OFF'] });
    // Stamped after the span ended: not on it.
    unended.stamp('LATE');
    await server.stop();
    expect(events(only(collector!.spans, 'InferRequest'))).toEqual([]);
  });

  it("lays an ensemble's steps under its model span, with triton.trace_parent_id", async () => {
    const server = await tracingServer({ first: { config: testConfig({ name: 'first' }) }, second: { config: testConfig({ name: 'second' }) }, ens: { config: TWO_STEP_ENSEMBLE } });
    await server.infer('ens', { inputs: { A: input().INPUT0! }, id: 'e' });
    await server.stop();
    const spans = collector!.spans;
    const root = only(spans, 'InferRequest');
    const ensemble = only(spans, 'ens');
    const [first, second] = [only(spans, 'first'), only(spans, 'second')];
    expect(ensemble.parentSpanId).toBe(root.spanId);
    expect([first.parentSpanId, second.parentSpanId]).toEqual([ensemble.spanId, ensemble.spanId]);
    expect(events(ensemble)).toEqual(['REQUEST_START', 'QUEUE_START', 'REQUEST_END']);
    expect(named(spans, 'compute').map((span) => span.parentSpanId).sort()).toEqual([first.spanId, second.spanId].sort());
    expect([first.attributes['triton.trace_parent_id'], first.attributes['triton.trace_id']]).toEqual([ensemble.attributes['triton.trace_id'], '2']);
    expect(new Set(spans.map((span) => span.traceId)).size).toBe(1);
  });

  it("lays a BLS call (startChildRequest) under the calling model's span, beside its compute span, as Triton's", async () => {
    const bls: Backend = {
      name: 'bls',
      async createModel(context) {
        return {
          async createInstance() {
            return {
              async execute(requests) {
                return Promise.all(requests.map(async (request) => (await startChildRequest(request, () => context.server.infer('m', { inputs: { INPUT0: request.inputs.INPUT0! } }))).outputs));
              },
            };
          },
        };
      },
    };
    const config = 'backend: "bls"\ninput { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] }\noutput { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] }';
    collector = await startOtlpCollector();
    const server = await fx.start({ caller: { config }, m: { config: testConfig({}) } }, { backends: [bls, testBackend(newProbe())], trace: { trace_mode: 'opentelemetry', trace_level: ['TIMESTAMPS'], trace_rate: 1, opentelemetry: { url: collector.url } } });
    await server.infer('caller', { inputs: input() });
    await server.stop();
    const spans = collector!.spans;
    const caller = only(spans, 'caller');
    const called = only(spans, 'm');
    expect(called.parentSpanId).toBe(caller.spanId);
    expect(named(spans, 'compute').map((span) => span.parentSpanId).sort()).toEqual([caller.spanId, called.spanId].sort());
    expect(called.attributes['triton.trace_parent_id']).toBe(caller.attributes['triton.trace_id']);
  });

  it('samples by trace_rate and trace_count, and marks a failed request ERROR', async () => {
    const server = await tracingServer({ m: { config: testConfig({}) } }, { trace_rate: 2, trace_count: 2 });
    for (let i = 1; i <= 6; i++) await server.infer('m', { inputs: input(), id: `r${i}` });
    server.updateTraceSettings({ trace_rate: 1, trace_count: -1 });
    await server.infer('m', { inputs: {} }).catch(() => {});
    await server.stop();
    const models = named(collector!.spans, 'm');
    expect(models.map((span) => span.attributes['triton.request_id'])).toEqual(['r2', 'r4', undefined]);
    expect(models[2]!.status).toMatchObject({ code: 2, message: 'INVALID_ARG' });
  });

  it("answers its settings with the mode's fields and refuses what does not apply to it", async () => {
    const server = await tracingServer({ m: { config: testConfig({}) } });
    expect(server.traceSettings()).toEqual({
      trace_level: ['TIMESTAMPS'],
      trace_rate: 1,
      trace_count: -1,
      log_frequency: 0,
      trace_file: '',
      trace_mode: 'opentelemetry',
      opentelemetry: { url: collector!.url, resource: { 'test.key': 'test.value' }, bsp_max_queue_size: 2048, bsp_schedule_delay: 5000, bsp_max_export_batch_size: 512 },
    });
    expect(server.updateTraceSettings({ trace_rate: 5, trace_mode: 'opentelemetry' }, 'm')).toMatchObject({ trace_rate: 5, trace_mode: 'opentelemetry' });
    const refusals: [object, string, RegExp][] = [
      [{ trace_mode: 'triton' }, 'UNSUPPORTED', /trace_mode is chosen when the server starts: it traces in mode 'opentelemetry'/],
      [{ trace_file: '/tmp/t.json' }, 'INVALID_ARG', /'trace_file' applies to trace mode 'triton' only/],
      [{ log_frequency: 2 }, 'INVALID_ARG', /'log_frequency' applies to trace mode 'triton' only/],
      [{ trace_level: ['TIMESTAMPS', 'TENSORS'] }, 'INVALID_ARG', /invalid trace setting :trace level TENSORS is not supported in trace mode 'opentelemetry'/],
      [{ trace_rate: 0 }, 'INVALID_ARG', /sample rate must be non-zero/],
      [{ opentelemetry: {} }, 'INVALID_ARG', /unknown trace setting 'opentelemetry'/],
    ];
    for (const [changes, code, message] of refusals) {
      expect(await rejection(Promise.resolve().then(() => server.updateTraceSettings(changes as never)))).toMatchObject({ code, message: expect.stringMatching(message) });
    }
  });

  it('refuses bad start-up settings naming them', async () => {
    const cases: [object, RegExp][] = [
      [{ trace_mode: 'otel' }, /'trace_mode' must be 'triton' or 'opentelemetry'/],
      [{ opentelemetry: { url: 'http://x' } }, /'opentelemetry' applies to trace_mode 'opentelemetry' only/],
      [{ trace_mode: 'opentelemetry', opentelemetry: { port: 1 } }, /unknown OpenTelemetry trace setting 'port'/],
      [{ trace_mode: 'opentelemetry', opentelemetry: { url: 'ftp://x/v1/traces' } }, /'url' must be an http\(s\) URL/],
      [{ trace_mode: 'opentelemetry', opentelemetry: { resource: { a: 1 } } }, /'resource' must be an object of string attributes/],
      [{ trace_mode: 'opentelemetry', opentelemetry: { bsp_max_queue_size: 10, bsp_max_export_batch_size: 11 } }, /'bsp_max_export_batch_size' \(11\) must be at most 'bsp_max_queue_size' \(10\)/],
      [{ trace_mode: 'opentelemetry', opentelemetry: { bsp_schedule_delay: -1 } }, /'bsp_schedule_delay' must be an integer/],
      [{ trace_mode: 'opentelemetry', trace_file: '/tmp/t.json' }, /'trace_file' applies to trace mode 'triton' only/],
      [{ trace_mode: 'opentelemetry', trace_level: ['TENSORS'] }, /TENSORS is not supported in trace mode 'opentelemetry'/],
    ];
    const server = await fx.start({ m: { config: testConfig({}) } });
    const repository = fx.repo!.path;
    await server.stop();
    for (const [trace, message] of cases) {
      expect(await rejection(InferenceServer.start({ modelRepository: repository, trace: trace as never }))).toMatchObject({ code: 'INVALID_ARG', message: expect.stringMatching(message) });
    }
  });

  it("takes Triton's defaults, OTEL_BSP_* and the OTLP endpoint variables, and host:port/path as http", () => {
    expect(openTelemetrySettings(undefined, {})).toEqual({ url: 'http://localhost:4318/v1/traces', resource: {}, bsp_max_queue_size: 2048, bsp_schedule_delay: 5000, bsp_max_export_batch_size: 512 });
    expect(openTelemetrySettings({ url: 'collector:4318/v1/traces' }, { OTEL_BSP_SCHEDULE_DELAY: '10', OTEL_BSP_MAX_QUEUE_SIZE: '600' })).toMatchObject({ url: 'http://collector:4318/v1/traces', bsp_schedule_delay: 10, bsp_max_queue_size: 600 });
    expect(openTelemetrySettings({}, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' }).url).toBe('http://c:4318/v1/traces');
    expect(() => openTelemetrySettings({}, { OTEL_BSP_MAX_QUEUE_SIZE: 'big' })).toThrow(/OTEL_BSP_MAX_QUEUE_SIZE must be an integer/);
  });

  it('is UNAVAILABLE naming what to install when a package is missing', async () => {
    const missing = Object.assign(new Error("Cannot find package '@opentelemetry/sdk-trace' imported from /x.js"), { code: 'ERR_MODULE_NOT_FOUND' });
    const error = await rejection(openTelemetrySdkFor({ trace_mode: 'opentelemetry' }, () => Promise.reject(missing)));
    expect(error).toMatchObject({ code: 'UNAVAILABLE', message: expect.stringMatching(/@opentelemetry\/sdk-trace is not installed: npm install @opentelemetry\/api@~1\.9 @opentelemetry\/sdk-trace/) });
  });
});
