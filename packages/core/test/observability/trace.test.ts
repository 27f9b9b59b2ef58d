import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_TRACE_SETTINGS, InferenceServer, isObservingRequests, type Tensor } from '@tritium/core';
import { TempRepository, testConfig, TWO_STEP_ENSEMBLE } from '../helpers/repository.js';
import { rejection, useServerFixture } from '../helpers/server-fixture.js';
import { newProbe, testBackend } from '../helpers/test-backend.js';
import { tensorEntry } from '../../src/observability/trace-tensor.js';

const fx = useServerFixture();
const input = (): Record<string, Tensor> => ({ INPUT0: { datatype: 'FP32', shape: [4], data: new Float32Array([1, 2, 3, 4]) } });
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tritium-trace-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

type Entry = { id: number; model_name?: string; model_version?: number; request_id?: string; parent_id?: number; timestamps?: { name: string; ns: number }[] };
const read = (path: string): Entry[] => JSON.parse(readFileSync(path, 'utf8')) as Entry[];
/** A trace's activity names, in the order written. */
const activities = (entries: Entry[], id: number) => entries.filter((e) => e.id === id && e.timestamps).map((e) => e.timestamps![0]!.name);
const traced = (file: string) => ({ trace_level: ['TIMESTAMPS'] as const, trace_rate: 1, trace_file: file });

describe('trace settings (Triton trace extension, in-process)', () => {
  it("start from Triton's defaults, or from ServerOptions.trace", async () => {
    let server = await fx.start({ m: { config: testConfig({}) } });
    expect(server.traceSettings()).toEqual(DEFAULT_TRACE_SETTINGS);
    expect(server.metadata().extensions).toContain('trace');
    await server.stop();
    server = await fx.start({ m: { config: testConfig({}) } }, { trace: { trace_rate: 5, trace_count: 3 } });
    expect(server.traceSettings()).toMatchObject({ trace_level: ['OFF'], trace_rate: 5, trace_count: 3 });
    await expect(InferenceServer.start({ modelRepository: fx.repo!.path, trace: { trace_level: ['TIMESTAMPS'] } })).rejects.toThrow(/trace file name is not given/);
  });

  it('fall back to the global settings field by field, and clear a model setting with null', async () => {
    const server = await fx.start({ m: { config: testConfig({}) } });
    expect(server.updateTraceSettings({ trace_rate: 7 }, 'm')).toMatchObject({ trace_rate: 7, trace_count: -1, trace_level: ['OFF'] });
    server.updateTraceSettings({ trace_count: 9 });
    // The model names its rate only: the global count reaches it.
    expect(server.traceSettings('m')).toMatchObject({ trace_rate: 7, trace_count: 9 });
    expect(server.traceSettings()).toMatchObject({ trace_rate: 1000, trace_count: 9 });
    expect(server.updateTraceSettings({ trace_rate: null }, 'm')).toMatchObject({ trace_rate: 1000 });
    // A cleared global setting goes back to the start-up value.
    expect(server.updateTraceSettings({ trace_count: null })).toMatchObject({ trace_count: -1 });
  });

  it('refuse an unknown model, an unknown setting, a bad value, TENSORS, and tracing with no file, changing nothing', async () => {
    const server = await fx.start({ m: { config: testConfig({}) } });
    expect(await rejection(Promise.resolve().then(() => server.traceSettings('nope')))).toMatchObject({ code: 'INVALID_ARG', message: expect.stringMatching(/unknown model : nope/) });
    const refusals: [object, string, RegExp][] = [
      [{ trace_speed: 1 }, 'INVALID_ARG', /unknown trace setting 'trace_speed'/],
      [{ trace_rate: -1 }, 'INVALID_ARG', /'trace_rate' must be/],
      [{ trace_count: -2 }, 'INVALID_ARG', /'trace_count' must be/],
      [{ trace_level: ['OFF', 'TIMESTAMPS'] }, 'INVALID_ARG', /'OFF' alone/],
      [{ trace_level: ['LOUD'] }, 'INVALID_ARG', /'trace_level' must be/],
      [{ trace_level: ['TIMESTAMPS'] }, 'INVALID_ARG', /invalid trace setting :trace file name is not given/],
      [{ trace_level: ['TIMESTAMPS'], trace_file: join(dir, 't.json'), trace_rate: 0 }, 'INVALID_ARG', /sample rate must be non-zero/],
    ];
    for (const [changes, code, message] of refusals) {
      const error = await rejection(Promise.resolve().then(() => server.updateTraceSettings(changes as never)));
      expect(error.code).toBe(code);
      expect(error.message).toMatch(message);
    }
    expect(server.traceSettings()).toEqual(DEFAULT_TRACE_SETTINGS);
  });

  it('observe requests only while some level is not OFF', async () => {
    const server = await fx.start({ m: { config: testConfig({}) } });
    expect(isObservingRequests()).toBe(false);
    server.updateTraceSettings({ ...traced(join(dir, 't.json')) }, 'm');
    expect(isObservingRequests()).toBe(true);
    server.updateTraceSettings({ trace_level: null, trace_rate: null, trace_file: null }, 'm');
    expect(isObservingRequests()).toBe(false);
  });
});

describe('trace files (Triton mode)', () => {
  it("write a plain request's trace with Triton's fields and activities, in ns", async () => {
    const file = join(dir, 'trace.json');
    const server = await fx.start({ m: { config: testConfig({}) } }, { trace: traced(file) });
    await server.infer('m', { inputs: input(), id: 'r1' });
    await server.stop();
    const entries = read(file);
    expect(entries[0]).toEqual({ id: 1, model_name: 'm', model_version: 1, request_id: 'r1' });
    expect(activities(entries, 1)).toEqual(['REQUEST_START', 'QUEUE_START', 'COMPUTE_START', 'COMPUTE_END', 'REQUEST_END']);
    const ns = entries.slice(1).map((e) => e.timestamps![0]!.ns);
    expect(ns).toEqual([...ns].sort((a, b) => a - b));
    expect(ns.every((n) => Number.isInteger(n) && n > 1e6)).toBe(true);
  });

  it('write an ensemble as a parent trace and child traces naming it in parent_id', async () => {
    const file = join(dir, 'ensemble.json');
    const server = await fx.start({ first: { config: testConfig({ name: 'first' }) }, second: { config: testConfig({ name: 'second' }) }, ens: { config: TWO_STEP_ENSEMBLE } }, { trace: traced(file) });
    await server.infer('ens', { inputs: { A: input().INPUT0! }, id: 'e' });
    await server.stop();
    const entries = read(file);
    const models = entries.filter((e) => e.model_name);
    expect(models).toEqual([
      { id: 1, model_name: 'ens', model_version: 1, request_id: 'e' },
      { id: 2, model_name: 'first', model_version: 1, request_id: 'e', parent_id: 1 },
      { id: 3, model_name: 'second', model_version: 1, request_id: 'e', parent_id: 1 },
    ]);
    expect(activities(entries, 1)).toEqual(['REQUEST_START', 'QUEUE_START', 'REQUEST_END']);
    expect(activities(entries, 2)).toEqual(['REQUEST_START', 'QUEUE_START', 'COMPUTE_START', 'COMPUTE_END', 'REQUEST_END']);
  });

  it("trace an ensemble's steps only with a traced ensemble request", async () => {
    const file = join(dir, 'steps.json');
    const models = { first: { config: testConfig({ name: 'first' }) }, second: { config: testConfig({ name: 'second' }) }, ens: { config: TWO_STEP_ENSEMBLE } };
    const server = await fx.start(models, { trace: traced(file) });
    server.updateTraceSettings({ trace_level: ['OFF'] }, 'ens');
    await server.infer('ens', { inputs: { A: input().INPUT0! }, id: 'e' });
    await server.infer('first', { inputs: input(), id: 'alone' });
    await server.stop();
    expect(read(file).filter((e) => e.model_name).map((e) => [e.model_name, e.request_id])).toEqual([['first', 'alone']]);
  });

  it("write the TENSORS level's queue inputs and backend outputs, as Triton's entries", async () => {
    const file = join(dir, 'tensors.json');
    const server = await fx.start({ m: { config: testConfig({}) } }, { trace: { ...traced(file), trace_level: ['TENSORS', 'TIMESTAMPS'] } });
    expect(server.traceSettings().trace_level).toEqual(['TIMESTAMPS', 'TENSORS']);
    await server.infer('m', { inputs: { INPUT0: { datatype: 'FP32', shape: [4], data: new Float32Array([0.1, 1 / 3, 2, -4]) } } });
    server.updateTraceSettings({ trace_level: ['TENSORS'] });
    await server.infer('m', { inputs: input() });
    await server.stop();
    const entries = read(file) as (Entry & { activity?: string; tensor?: object })[];
    const tensors = entries.filter((e) => e.activity);
    expect(tensors).toEqual([
      { id: 1, activity: 'TENSOR_QUEUE_INPUT', tensor: { name: 'INPUT0', data: '0.1,0.333333,2,-4', shape: '4', dtype: 'FP32' } },
      { id: 1, activity: 'TENSOR_BACKEND_OUTPUT', tensor: { name: 'OUTPUT0', data: '0.1,0.333333,2,-4', shape: '4', dtype: 'FP32' } },
      { id: 2, activity: 'TENSOR_QUEUE_INPUT', tensor: { name: 'INPUT0', data: '1,2,3,4', shape: '4', dtype: 'FP32' } },
      { id: 2, activity: 'TENSOR_BACKEND_OUTPUT', tensor: { name: 'OUTPUT0', data: '1,2,3,4', shape: '4', dtype: 'FP32' } },
    ]);
    // TENSORS alone: no entry naming the trace and no timestamps, as Triton's.
    expect(entries.filter((e) => e.id === 2)).toHaveLength(2);
    expect(activities(entries, 1)).toEqual(['REQUEST_START', 'QUEUE_START', 'COMPUTE_START', 'COMPUTE_END', 'REQUEST_END']);
  });

  it('sample one request in trace_rate until trace_count is spent, then write the traces to trace_file.0', async () => {
    const file = join(dir, 'count.json');
    const server = await fx.start({ m: { config: testConfig({}) } }, { trace: { ...traced(file), trace_rate: 2, trace_count: 2 } });
    for (let i = 0; i < 6; i++) await server.infer('m', { inputs: input(), id: String(i) });
    expect(server.traceSettings().trace_count).toBe(0);
    // The count spent: written at once, to the indexed file, as Triton does.
    const entries = read(`${file}.0`);
    expect(entries.filter((e) => e.model_name).map((e) => e.request_id)).toEqual(['1', '3']);
    await server.stop();
    expect(existsSync(file)).toBe(false);
  });

  it('write every log_frequency traces to trace_file.<index>', async () => {
    const file = join(dir, 'frequent.json');
    const server = await fx.start({ m: { config: testConfig({}) } }, { trace: { ...traced(file), log_frequency: 2 } });
    for (let i = 0; i < 5; i++) await server.infer('m', { inputs: input(), id: String(i) });
    expect(read(`${file}.0`).filter((e) => e.model_name).map((e) => e.request_id)).toEqual(['0', '1']);
    expect(read(`${file}.1`).filter((e) => e.model_name).map((e) => e.request_id)).toEqual(['2', '3']);
    await server.stop();
    // The rest when the server stops.
    expect(read(`${file}.2`).filter((e) => e.model_name).map((e) => e.request_id)).toEqual(['4']);
  });

  it('write what a replaced setting holds into the same file, and keep a model that names every field on its own count', async () => {
    const file = join(dir, 'replaced.json');
    const server = await fx.start({ m: { config: testConfig({}) }, n: { config: testConfig({ name: 'n' }) } }, { trace: traced(file) });
    server.updateTraceSettings({ ...traced(join(dir, 'n.json')), trace_count: 5, log_frequency: 0 }, 'n');
    await server.infer('n', { inputs: input(), id: 'n1' });
    await server.infer('m', { inputs: input(), id: 'before' });
    server.updateTraceSettings({ trace_rate: 1 });
    await server.infer('m', { inputs: input(), id: 'after' });
    expect(server.traceSettings('n').trace_count).toBe(4);
    await server.stop();
    expect(read(file).filter((e) => e.model_name).map((e) => e.request_id)).toEqual(['before', 'after']);
    expect(read(join(dir, 'n.json')).filter((e) => e.model_name).map((e) => e.request_id)).toEqual(['n1']);
  });

  it("trace by the model's own setting, and only this server's requests", async () => {
    const file = join(dir, 'model.json');
    const server = await fx.start({ m: { config: testConfig({}) }, other: { config: testConfig({ name: 'other' }) } });
    server.updateTraceSettings(traced(file), 'm');
    const repo = await TempRepository.create({ m: { config: testConfig({}) } });
    const neighbour = await InferenceServer.start({ modelRepository: repo.path, backends: [testBackend(newProbe())] });
    try {
      await neighbour.infer('m', { inputs: input(), id: 'neighbour' });
      await server.infer('other', { inputs: input(), id: 'other' });
      await server.infer('m', { inputs: input(), id: 'mine' });
    } finally {
      await neighbour.stop();
      await repo.remove();
    }
    await server.stop();
    expect(read(file).filter((e) => e.model_name).map((e) => e.request_id)).toEqual(['mine']);
  });
});

describe('TENSORS entries', () => {
  it("print each datatype's values as Triton does", () => {
    const entry = (tensor: Tensor) => (JSON.parse(tensorEntry(7, 'TENSOR_QUEUE_INPUT', 'T', tensor)) as { tensor: { data: string; shape: string } }).tensor;
    expect(entry({ datatype: 'BYTES', shape: [2], data: ['ab', new TextEncoder().encode('c"d')] })).toMatchObject({ data: '"ab","c"d"', shape: '2' });
    expect(entry({ datatype: 'BOOL', shape: [1, 2], data: new Uint8Array([1, 0]) })).toMatchObject({ data: '1,0', shape: '1,2' });
    expect(entry({ datatype: 'INT64', shape: [2], data: new BigInt64Array([-1n, 2n ** 40n]) })).toMatchObject({ data: '-1,1099511627776' });
    expect(entry({ datatype: 'FP16', shape: [1], data: new Uint16Array([0x3c00]) })).toMatchObject({ data: '' });
    expect(JSON.parse(tensorEntry(7, 'TENSOR_BACKEND_OUTPUT', 'T', { datatype: 'FP64', shape: [1], data: new Float64Array([1e-7]) }))).toEqual({
      id: 7,
      activity: 'TENSOR_BACKEND_OUTPUT',
      tensor: { name: 'T', data: '1e-7', shape: '1', dtype: 'FP64' },
    });
  });
});
