import { channel, subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  REQUEST_CHANNELS,
  type RequestComputeMessage,
  type RequestEndMessage,
  type RequestErrorMessage,
  type RequestQueueMessage,
  type RequestStageMessage,
  type Tensor,
} from '@tritium/core';
import type { BackendRequest } from '@tritium/core/backend';
import { testConfig, TWO_STEP_ENSEMBLE } from '../helpers/repository.js';
import { rejection, useServerFixture } from '../helpers/server-fixture.js';
import { newProbe, sleep } from '../helpers/test-backend.js';

const fx = useServerFixture();
const fp32 = (...values: number[]): Tensor => ({ datatype: 'FP32', shape: [values.length], data: new Float32Array(values) });
const row = (value: number): Record<string, Tensor> => ({ INPUT0: { datatype: 'FP32', shape: [1, 4], data: new Float32Array(4).fill(value) } });

type Stage = keyof typeof REQUEST_CHANNELS;
type AnyMessage = RequestStageMessage & Partial<RequestComputeMessage & RequestErrorMessage & RequestEndMessage>;
interface Heard {
  readonly stage: Stage;
  readonly message: AnyMessage;
}

/** Subscribes to every request channel until the test ends; returns what they heard, in order. */
function listen(): Heard[] {
  const heard: Heard[] = [];
  for (const stage of Object.keys(REQUEST_CHANNELS) as Stage[]) {
    const listener = (message: unknown) => heard.push({ stage, message: message as AnyMessage });
    subscribe(REQUEST_CHANNELS[stage], listener);
    listeners.push(() => unsubscribe(REQUEST_CHANNELS[stage], listener));
  }
  return heard;
}
const listeners: Array<() => void> = [];
afterEach(() => {
  for (const stop of listeners.splice(0)) stop();
  vi.restoreAllMocks();
});

/** The stages one request went through, by its caller's id. */
const stagesOf = (heard: Heard[], id: string) => heard.filter((h) => h.message.request.id === id).map((h) => h.stage);

describe('request channels (node:diagnostics_channel)', () => {
  it('publish start, queue, compute start and end, then end, with the request and times in order', async () => {
    const server = await fx.start({ m: { config: testConfig({ maxBatchSize: 8 }) } });
    const heard = listen();
    await server.infer('m', { inputs: row(1), id: 'one', priority: 0 });
    expect(heard.map((h) => h.stage)).toEqual(['start', 'queue', 'computeStart', 'computeEnd', 'end']);
    const view = heard[0]!.message.request;
    expect(view).toMatchObject({ id: 'one', modelName: 'm', modelVersion: 1, batchSize: 1, priority: 0, parent: undefined });
    // One object for the whole request: a subscriber keys its state on it.
    for (const { message } of heard) expect(message.request).toBe(view);
    const times = heard.map((h) => h.message.time);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(times[0]).toBe(view.arrivalTime);
    expect(heard[2]!.message.execution).toEqual({ batchSize: 1, requestCount: 1 });
    // The queue carries the inputs, compute:end the outputs the backend returned.
    expect((heard[1]!.message as unknown as RequestQueueMessage).inputs.INPUT0!.shape).toEqual([1, 4]);
    expect(heard[3]!.message.outputs?.OUTPUT0?.shape).toEqual([1, 4]);
    const end = heard[4]!.message;
    expect(end).toMatchObject({ outcome: 'success', cached: false });
    expect(end.totalMs).toBeCloseTo(end.queueMs! + end.computeMs!, 6);
    expect(end.computeMs).toBeCloseTo(heard[3]!.message.time - heard[2]!.message.time, 6);
  });

  it('number each request and tell requests apart', async () => {
    const server = await fx.start({ m: { config: testConfig({}) } });
    const heard = listen();
    await server.infer('m', { inputs: { INPUT0: fp32(1, 2, 3, 4) } });
    await server.infer('m', { inputs: { INPUT0: fp32(1, 2, 3, 4) } });
    const starts = heard.filter((h) => h.stage === 'start').map((h) => h.message.request);
    expect(starts).toHaveLength(2);
    expect(starts[1]!.serial).toBeGreaterThan(starts[0]!.serial);
  });

  it('publish error then end with the code for a failed request, and start, error, end for a refused one', async () => {
    const server = await fx.start({ m: { config: testConfig({}) } });
    const heard = listen();
    await rejection(server.infer('m', { inputs: { INPUT0: fp32(1, 2, 3, 4) }, id: 'fails', parameters: { fail: 'on purpose' } }));
    await rejection(server.infer('m', { inputs: { INPUT0: fp32(1, 2) }, id: 'bad-input' }));
    await rejection(server.infer('nope', { inputs: {}, id: 'unknown-model' }));
    expect(stagesOf(heard, 'fails')).toEqual(['start', 'queue', 'computeStart', 'computeEnd', 'error', 'end']);
    const failed = heard.filter((h) => h.message.request.id === 'fails');
    expect(failed[4]!.message.error?.message).toMatch(/asked to fail/);
    expect(failed[5]!.message).toMatchObject({ outcome: 'INTERNAL', cached: false });
    for (const [id, code, version] of [['bad-input', 'INVALID_ARG', 1], ['unknown-model', 'NOT_FOUND', undefined]] as const) {
      const refused = heard.filter((h) => h.message.request.id === id);
      expect(refused.map((h) => h.stage)).toEqual(['start', 'error', 'end']);
      expect(refused[0]!.message.request.modelVersion).toBe(version);
      expect(refused[1]!.message.error?.code).toBe(code);
      expect(refused[2]!.message).toMatchObject({ outcome: code, queueMs: undefined, computeMs: undefined });
    }
  });

  it('publish end with CANCELLED for a request cancelled while it runs', async () => {
    const server = await fx.start({ m: { config: testConfig({}) } });
    const heard = listen();
    const run = server.startInference('m', { inputs: { INPUT0: fp32(1, 2, 3, 4) }, id: 'cancelled', parameters: { delay_ms: 50 } });
    await sleep(10);
    run.cancel();
    expect((await rejection(run.response)).code).toBe('CANCELLED');
    await vi.waitFor(() => expect(stagesOf(heard, 'cancelled')).toContain('computeEnd'));
    expect(stagesOf(heard, 'cancelled')).toEqual(['start', 'queue', 'computeStart', 'error', 'end', 'computeEnd']);
    expect(heard.find((h) => h.stage === 'end')!.message.outcome).toBe('CANCELLED');
  });

  it('publish start and a cached end for an answer from the response cache', async () => {
    const server = await fx.start({ m: { config: testConfig({ extra: 'response_cache { enable: true }' }) } }, { responseCache: { type: 'local', sizeBytes: 1 << 20 } });
    const heard = listen();
    await server.infer('m', { inputs: { INPUT0: fp32(1, 2, 3, 4) }, id: 'miss' });
    await server.infer('m', { inputs: { INPUT0: fp32(1, 2, 3, 4) }, id: 'hit' });
    expect(stagesOf(heard, 'miss')).toEqual(['start', 'queue', 'computeStart', 'computeEnd', 'end']);
    expect(stagesOf(heard, 'hit')).toEqual(['start', 'end']);
    expect(heard.at(-1)!.message).toMatchObject({ outcome: 'success', cached: true, queueMs: undefined, computeMs: undefined });
  });

  it('give each request of a dynamic batch its own compute events, sharing one execution', async () => {
    const config = testConfig({ maxBatchSize: 8, extra: 'dynamic_batching { max_queue_delay_microseconds: 5000000 preferred_batch_size: [ 4 ] }' });
    const server = await fx.start({ m: { config } });
    const heard = listen();
    await Promise.all([1, 2, 3, 4].map((v) => server.infer('m', { inputs: row(v), id: String(v) })));
    const starts = heard.filter((h) => h.stage === 'computeStart');
    expect(starts.map((h) => h.message.request.id)).toEqual(['1', '2', '3', '4']);
    const execution = starts[0]!.message.execution;
    expect(execution).toEqual({ batchSize: 4, requestCount: 4 });
    for (const { message } of heard.filter((h) => h.stage === 'computeStart' || h.stage === 'computeEnd')) expect(message.execution).toBe(execution);
    for (const id of ['1', '2', '3', '4']) expect(stagesOf(heard, id)).toEqual(['start', 'queue', 'computeStart', 'computeEnd', 'end']);
  });

  it("name an ensemble's request as the parent of its steps' requests", async () => {
    const server = await fx.start({ first: { config: testConfig({ name: 'first' }) }, second: { config: testConfig({ name: 'second' }) }, ens: { config: TWO_STEP_ENSEMBLE } });
    const heard = listen();
    await server.infer('ens', { inputs: { A: fp32(1, 2, 3, 4) }, id: 'e' });
    const starts = heard.filter((h) => h.stage === 'start').map((h) => h.message.request);
    expect(starts.map((r) => r.modelName)).toEqual(['ens', 'first', 'second']);
    const [parent, ...steps] = starts;
    expect(parent!.parent).toBeUndefined();
    for (const step of steps) {
      expect(step.parent).toBe(parent);
      // Steps carry the ensemble's id, as in Triton; the serial tells them apart.
      expect(step.id).toBe('e');
      expect(step.serial).not.toBe(parent!.serial);
    }
    // The ensemble ends after its steps; it has no execution of its own.
    expect(heard.filter((h) => h.message.request === parent).map((h) => h.stage)).toEqual(['start', 'queue', 'end']);
    expect(heard.at(-1)!.message.request).toBe(parent);
  });

  it('build nothing when no one subscribes: each stage asks hasSubscribers and goes on', async () => {
    const probe = newProbe();
    const server = await fx.start({ m: { config: testConfig({}) } }, {}, probe);
    // The compute phases' channels are asked only for a backend that reports its compute times (this one does not).
    const reportedOnly: Stage[] = ['computeInputEnd', 'computeOutputStart'];
    const stages = (Object.keys(REQUEST_CHANNELS) as Stage[]).filter((stage) => !reportedOnly.includes(stage));
    const asked = stages.map((stage) => vi.spyOn(channel(REQUEST_CHANNELS[stage]), 'hasSubscribers', 'get'));
    const publish = (Object.keys(REQUEST_CHANNELS) as Stage[]).map((stage) => vi.spyOn(channel(REQUEST_CHANNELS[stage]), 'publish'));
    await server.infer('m', { inputs: { INPUT0: fp32(1, 2, 3, 4) } });
    // start, queue, compute start and end, and end (with error) were each asked.
    for (const spy of asked) expect(spy).toHaveBeenCalled();
    for (const spy of publish) expect(spy).not.toHaveBeenCalled();
    // The request the backend ran carries no view.
    const ran = probe.batches[0]![0] as BackendRequest & { channelView?: unknown };
    expect(ran.channelView).toBeUndefined();
  });
});
