import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CallerTrace, REQUEST_CHANNELS, type Backend, type RequestStageMessage, type RequestView, type Tensor } from '@tritium/core';
import { startChildRequest, type BackendRequest, type ExecutionReport } from '@tritium/core/backend';
import { inferAsHttpFrontend } from '../helpers/http-caller.js';
import { testConfig } from '../helpers/repository.js';
import { useServerFixture } from '../helpers/server-fixture.js';
import { sleep, testBackend } from '../helpers/test-backend.js';

const fx = useServerFixture();
const input = (): Record<string, Tensor> => ({ INPUT0: { datatype: 'FP32', shape: [4], data: new Float32Array([1, 2, 3, 4]) } });
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tritium-caller-trace-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

type Entry = { id: number; model_name?: string; request_id?: string; parent_id?: number; timestamps?: { name: string; ns: number }[] };
const read = (path: string): Entry[] => JSON.parse(readFileSync(path, 'utf8')) as Entry[];
/** Each entry of trace `id` as the file has it: the model entry as 'MODEL', a timestamp by its name. */
const written = (entries: Entry[], id: number) => entries.filter((e) => e.id === id).map((e) => (e.model_name ? 'MODEL' : e.timestamps![0]!.name));
const traced = (file: string, rate = 1) => ({ trace_level: ['TIMESTAMPS'] as const, trace_rate: rate, trace_file: file });

/** Model config of one of this file's backends: FP32 [4] in, the same out. */
const configFor = (backend: string, name: string) => testConfig({ name }).replace('backend: "test"', `backend: "${backend}"`);

/** A backend that reports when its inputs were ready and its outputs started: 2 ms of input, 3 of inference, 1 of output. */
const phasedBackend: Backend = {
  name: 'phased',
  defaultModelFilename: 'model.test',
  async createModel() {
    return {
      async createInstance() {
        return {
          async execute(requests: readonly BackendRequest[], report?: ExecutionReport) {
            await sleep(2);
            report?.inputsReady();
            await sleep(3);
            report?.outputsStarted();
            await sleep(1);
            return requests.map((request) => ({ OUTPUT0: request.inputs.INPUT0! }));
          },
        };
      },
    };
  },
};

/** A backend whose model calls model `m` (as a Python model's BLS call), as a child of the request it executes. */
const callingBackend: Backend = {
  name: 'calling',
  defaultModelFilename: 'model.test',
  async createModel(context) {
    return {
      async createInstance() {
        return {
          async execute(requests: readonly BackendRequest[]) {
            return Promise.all(
              requests.map(async (request) => {
                const answer = await startChildRequest(request, () => context.server.infer('m', { inputs: { INPUT0: request.inputs.INPUT0! } }));
                return { OUTPUT0: answer.outputs.OUTPUT0! };
              }),
            );
          },
        };
      },
    };
  },
};

describe("a caller's activities in Triton-mode traces (CallerTrace)", () => {
  it('writes what the caller stamped before the request ahead of its entries, and the rest after REQUEST_END, once the caller ends', async () => {
    const file = join(dir, 'trace.json');
    const server = await fx.start({ m: { config: testConfig({}) } }, { trace: traced(file) });
    const trace = await inferAsHttpFrontend(server, 'm', input());
    // Not ended: the trace waits for its caller.
    server.updateTraceSettings({ trace_rate: 1 });
    expect(existsSync(file)).toBe(false);
    trace.end();
    await server.stop();
    const entries = read(file);
    expect(written(entries, 1)).toEqual([
      'HTTP_RECV_START',
      'HTTP_RECV_END',
      'MODEL',
      'REQUEST_START',
      'QUEUE_START',
      'COMPUTE_START',
      'COMPUTE_END',
      'REQUEST_END',
      'HTTP_SEND_START',
      'HTTP_SEND_END',
    ]);
    const ns = entries.filter((e) => e.timestamps).map((e) => e.timestamps![0]!.ns);
    expect(ns).toEqual([...ns].sort((a, b) => a - b));
  });

  it('hands the caller trace, with its W3C context, to every channel subscriber on the RequestView', async () => {
    const server = await fx.start({ m: { config: testConfig({}) } });
    const seen: RequestView[] = [];
    const listener = (message: unknown) => seen.push((message as RequestStageMessage).request);
    subscribe(REQUEST_CHANNELS.start, listener);
    try {
      const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      await server.infer('m', { inputs: input(), trace: new CallerTrace({ traceparent, tracestate: 'vendor=1' }) });
      await server.infer('m', { inputs: input(), trace: new CallerTrace({ traceparent: 'not-a-traceparent' }) });
      expect(seen.map((view) => [view.trace?.traceparent, view.trace?.tracestate])).toEqual([
        [traceparent, 'vendor=1'],
        [undefined, undefined],
      ]);
      await expect(server.infer('m', { inputs: input(), trace: { traceparent } as never })).rejects.toThrow(/`trace` must be a CallerTrace/);
    } finally {
      unsubscribe(REQUEST_CHANNELS.start, listener);
    }
  });

  it('refuses a stamp without a name or with a time that is not a number, naming it', () => {
    const trace = new CallerTrace();
    expect(() => trace.stamp('')).toThrow('CallerTrace.stamp: the activity name must be a non-empty string, got ""');
    expect(() => trace.stamp('APP_RECV_END', Number.NaN)).toThrow("CallerTrace.stamp('APP_RECV_END'): the time must be a performance.now() number of milliseconds, got NaN");
    expect(trace.activities).toEqual([]);
  });

  it('waits on no caller whose request was not sampled, and writes a sampled one whose caller never ends when the server stops', async () => {
    const file = join(dir, 'rate.json');
    const server = await fx.start({ m: { config: testConfig({}) } }, { trace: traced(file, 2) });
    const waitedOn: CallerTrace[] = [];
    class WatchedTrace extends CallerTrace {
      override whenEnded(listener: () => void): void {
        waitedOn.push(this);
        super.whenEnded(listener);
      }
    }
    const unsampled = new WatchedTrace({ endsAfterResponse: true });
    const sampled = new WatchedTrace({ endsAfterResponse: true });
    await server.infer('m', { inputs: input(), trace: unsampled, id: 'first' });
    await server.infer('m', { inputs: input(), trace: sampled, id: 'second' });
    // One in two is sampled: the tracer holds nothing for the first, so nothing waits on its end (which never comes).
    expect(waitedOn).toEqual([sampled]);
    await server.infer('m', { inputs: input(), id: 'third' });
    await server.infer('m', { inputs: input(), id: 'fourth' });
    await server.stop();
    // 'fourth' was written as it ended; 'second', still waiting on its caller, when the server stopped.
    expect(read(file).map((e) => e.model_name && [e.id, e.request_id]).filter(Boolean)).toEqual([
      [2, 'fourth'],
      [1, 'second'],
    ]);
  });
});

describe("a backend's compute times (ExecutionReport)", () => {
  it('split statistics into compute_input, compute_infer and compute_output, and trace COMPUTE_INPUT_END and COMPUTE_OUTPUT_START', async () => {
    const file = join(dir, 'phases.json');
    const server = await fx.start({ p: { config: configFor('phased', 'p') } }, { trace: traced(file), backends: [testBackend(), phasedBackend] });
    await server.infer('p', { inputs: input() });
    const [stats] = server.statistics('p').model_stats;
    const { compute_input, compute_infer, compute_output } = stats!.inference_stats;
    expect([compute_input.count, compute_infer.count, compute_output.count]).toEqual([1, 1, 1]);
    expect(compute_input.ns).toBeGreaterThanOrEqual(1.5e6);
    expect(compute_infer.ns).toBeGreaterThanOrEqual(2.5e6);
    expect(compute_output.ns).toBeGreaterThanOrEqual(0.5e6);
    const [batch] = stats!.batch_stats;
    expect(batch!.compute_input.ns + batch!.compute_infer.ns + batch!.compute_output.ns).toBeGreaterThanOrEqual(5.5e6);
    expect(batch!.compute_infer.ns).toBeGreaterThanOrEqual(2.5e6);
    await server.stop();
    expect(written(read(file), 1)).toEqual(['MODEL', 'REQUEST_START', 'QUEUE_START', 'COMPUTE_START', 'COMPUTE_INPUT_END', 'COMPUTE_OUTPUT_START', 'COMPUTE_END', 'REQUEST_END']);
  });

  it('count all of an execution as compute_infer for a backend that reports nothing', async () => {
    const server = await fx.start({ m: { config: testConfig({}) } });
    await server.infer('m', { inputs: input() });
    const { compute_input, compute_infer, compute_output } = server.statistics('m').model_stats[0]!.inference_stats;
    expect([compute_input, compute_output]).toEqual([
      { count: 1, ns: 0 },
      { count: 1, ns: 0 },
    ]);
    expect(compute_infer.count).toBe(1);
  });
});

describe('requests a model makes (BLS) as children', () => {
  it("writes the call as a child trace naming the caller's request in parent_id", async () => {
    const file = join(dir, 'bls.json');
    const models = { m: { config: testConfig({}) }, caller: { config: configFor('calling', 'caller') } };
    const server = await fx.start(models, { trace: traced(file), backends: [testBackend(), callingBackend] });
    const parents: (number | undefined)[] = [];
    const listener = (message: unknown) => parents.push((message as RequestStageMessage).request.parent?.serial);
    subscribe(REQUEST_CHANNELS.start, listener);
    try {
      await server.infer('caller', { inputs: input(), id: 'outer' });
    } finally {
      unsubscribe(REQUEST_CHANNELS.start, listener);
    }
    expect(parents[0]).toBeUndefined();
    expect(parents[1]).toEqual(expect.any(Number));
    await server.stop();
    const entries = read(file);
    expect(entries.filter((e) => e.model_name)).toMatchObject([
      { id: 1, model_name: 'caller', model_version: 1, request_id: 'outer' },
      { id: 2, model_name: 'm', model_version: 1, parent_id: 1 },
    ]);
    expect(entries[0]!.parent_id).toBeUndefined();
    expect(written(entries, 2)).toEqual(['MODEL', 'REQUEST_START', 'QUEUE_START', 'COMPUTE_START', 'COMPUTE_END', 'REQUEST_END']);
  });
});
