import { describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InferenceError, InferenceServer, type Backend, type InferRequest, type Tensor } from '@tritium/core';
import { newProbe, sleep, testBackend } from '../helpers/test-backend.js';
import { TempRepository, testConfig, type TestModel } from '../helpers/repository.js';
import { useServerFixture } from '../helpers/server-fixture.js';
import { captureWarnings } from '../helpers/warnings.js';

const fx = useServerFixture();

async function serve(models: Record<string, TestModel>, probe = newProbe()) {
  return { server: await fx.start(models, {}, probe), probe };
}

const fp32 = (shape: number[], values?: number[]) => ({
  datatype: 'FP32' as const,
  shape,
  data: Float32Array.from(values ?? Array.from({ length: shape.reduce((a, b) => a * b, 1) }, (_, i) => i)),
});

async function expectError(promise: Promise<unknown>, code: string, text: string | RegExp) {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(InferenceError);
  expect((error as InferenceError).code).toBe(code);
  expect((error as InferenceError).message).toMatch(text);
}

describe('infer()', () => {
  it('returns the backend outputs with the model name and version', async () => {
    const { server } = await serve({ add: { config: testConfig({ behavior: 'add', inputs: 2 }) } });
    const response = await server.infer('add', { inputs: { INPUT0: fp32([4], [1, 2, 3, 4]), INPUT1: fp32([4], [10, 20, 30, 40]) } });
    expect(response.modelName).toBe('add');
    expect(response.modelVersion).toBe(1);
    expect(Array.from(response.outputs.OUTPUT0!.data as Float32Array)).toEqual([11, 22, 33, 44]);
  });

  it('accepts plain arrays and returns only the requested outputs', async () => {
    const { server } = await serve({ id: { config: testConfig({ inputs: 2 }) } });
    const response = await server.infer('id', {
      inputs: { INPUT0: { datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }, INPUT1: fp32([4]) },
      outputs: ['OUTPUT1'],
    });
    expect(Object.keys(response.outputs)).toEqual(['OUTPUT1']);
  });

  it('returns every output when the requested list is empty, as Triton', async () => {
    const { server } = await serve({ id: { config: testConfig({ inputs: 2 }) } });
    const response = await server.infer('id', { inputs: { INPUT0: fp32([4]), INPUT1: fp32([4]) }, outputs: [] });
    expect(Object.keys(response.outputs).sort()).toEqual(['OUTPUT0', 'OUTPUT1']);
  });

  it('accepts a batch up to max_batch_size', async () => {
    const { server } = await serve({ id: { config: testConfig({ maxBatchSize: 8 }) } });
    const response = await server.infer('id', { inputs: { INPUT0: fp32([3, 4]) } });
    expect(response.outputs.OUTPUT0!.shape).toEqual([3, 4]);
  });

  describe('validation at the door', () => {
    const cases: Array<[string, InferRequest, string, RegExp]> = [
      ['unknown input', { inputs: { INPUT0: fp32([4]), BOGUS: fp32([4]) } }, 'INVALID_ARG', /unexpected input 'BOGUS'/],
      ['missing input', { inputs: {} }, 'INVALID_ARG', /^model 'm': expected 1 inputs but got 0 inputs for model 'm'\. Got input\(s\) \[\], but missing required input\(s\) \['INPUT0'\]\. Please provide all required input\(s\)\.$/],
      ['wrong datatype', { inputs: { INPUT0: { datatype: 'INT32', shape: [4], data: new Int32Array(4) } } }, 'INVALID_ARG', /'INPUT0' has data type INT32, the model expects FP32/],
      ['wrong rank', { inputs: { INPUT0: fp32([2, 4]) } }, 'INVALID_ARG', /'INPUT0' has shape \[2,4\], the model expects \[4\]/],
      ['wrong dim', { inputs: { INPUT0: fp32([5]) } }, 'INVALID_ARG', /'INPUT0' has shape \[5\]/],
      ['data length', { inputs: { INPUT0: { datatype: 'FP32', shape: [4], data: new Float32Array(3) } } }, 'INVALID_ARG', /INPUT0/],
      ['data of the wrong kind', { inputs: { INPUT0: { datatype: 'FP32', shape: [4], data: new Int32Array(4) as never } } }, 'INVALID_ARG', /INPUT0/],
      ['unknown datatype', { inputs: { INPUT0: { datatype: 'FP8' as never, shape: [4], data: new Float32Array(4) } } }, 'INVALID_ARG', /INPUT0/],
      ['unknown output', { inputs: { INPUT0: fp32([4]) }, outputs: ['NOPE'] }, 'INVALID_ARG', /unknown output 'NOPE'/],
      ['an output asked twice', { inputs: { INPUT0: fp32([4]) }, outputs: ['OUTPUT0', 'OUTPUT0'], id: 'r1' }, 'INVALID_ARG', /^model 'm' request 'r1': output 'OUTPUT0' already exists in request$/],
      ['negative timeout', { inputs: { INPUT0: fp32([4]) }, timeoutMicroseconds: -1 }, 'INVALID_ARG', /timeoutMicroseconds/],
      ['no inputs object', {} as InferRequest, 'INVALID_ARG', /inputs/],
      ['fractional priority', { inputs: { INPUT0: fp32([4]) }, priority: 1.5 }, 'INVALID_ARG', /`priority` must be a non-negative integer, got 1.5/],
      ['negative priority', { inputs: { INPUT0: fp32([4]) }, priority: -1 }, 'INVALID_ARG', /`priority` must be a non-negative integer/],
      ['priority as a string', { inputs: { INPUT0: fp32([4]) }, priority: '1' as never }, 'INVALID_ARG', /`priority` must be a non-negative integer, got "1"/],
      ['sequence not an object', { inputs: { INPUT0: fp32([4]) }, sequence: 7 as never }, 'INVALID_ARG', /`sequence` must be an object/],
      ['negative sequence id', { inputs: { INPUT0: fp32([4]) }, sequence: { id: -1 } }, 'INVALID_ARG', /`sequence.id` must be a non-negative integer \(a bigint up to 2\^64-1\) or a non-empty string, got -1/],
      ['fractional sequence id', { inputs: { INPUT0: fp32([4]) }, sequence: { id: 0.5 } }, 'INVALID_ARG', /`sequence.id`/],
      ['empty sequence id', { inputs: { INPUT0: fp32([4]) }, sequence: { id: '' } }, 'INVALID_ARG', /`sequence.id`.*got ""/],
      ['sequence start not a boolean', { inputs: { INPUT0: fp32([4]) }, sequence: { id: 1, start: 1 as never } }, 'INVALID_ARG', /`sequence.start` must be a boolean, got 1/],
      ['sequence end not a boolean', { inputs: { INPUT0: fp32([4]) }, sequence: { id: 's', end: 'yes' as never } }, 'INVALID_ARG', /`sequence.end` must be a boolean/],
      ['id not a string', { inputs: { INPUT0: fp32([4]) }, id: 7 as never }, 'INVALID_ARG', /`id` must be a string, got 7/],
      ['a dim no runtime takes, with no elements', { inputs: { INPUT0: { datatype: 'FP32', shape: [2 ** 32, 0], data: new Float32Array(0) } } }, 'INVALID_ARG', /'INPUT0': shape \[4294967296,0\] must be an array of non-negative integers up to 2147483647/],
    ];
    it.each(cases)('%s', async (_, request, code, text) => {
      const { server, probe } = await serve({ m: { config: testConfig({}) } });
      await expectError(server.infer('m', request), code, text);
      expect(probe.executions).toBe(0);
    });

    it('checks batch size against max_batch_size and across inputs', async () => {
      const { server } = await serve({ b: { config: testConfig({ maxBatchSize: 2, inputs: 2 }) } });
      await expectError(server.infer('b', { inputs: { INPUT0: fp32([3, 4]), INPUT1: fp32([3, 4]) } }), 'INVALID_ARG', /batch size 3, the model accepts 1 to 2/);
      await expectError(server.infer('b', { inputs: { INPUT0: fp32([1, 4]), INPUT1: fp32([2, 4]) } }), 'INVALID_ARG', /batch size 2, other inputs have 1/);
      await expectError(server.infer('b', { inputs: { INPUT0: fp32([4]), INPUT1: fp32([4]) } }), 'INVALID_ARG', /expects \[-1,4\]/);
    });

    it('matches variable dims (-1)', async () => {
      const { server } = await serve({ v: { config: testConfig({ dims: [-1, 2] }) } });
      expect((await server.infer('v', { inputs: { INPUT0: fp32([5, 2]) } })).outputs.OUTPUT0!.shape).toEqual([5, 2]);
      await expectError(server.infer('v', { inputs: { INPUT0: fp32([5, 3]) } }), 'INVALID_ARG', /expects \[-1,2\]/);
    });

    it('names the request id in a refusal when the caller gave one', async () => {
      const { server } = await serve({ m: { config: testConfig({}) } });
      await expectError(server.infer('m', { id: 'r1', inputs: { INPUT0: fp32([5]) } }), 'INVALID_ARG', /^model 'm' request 'r1': input 'INPUT0' has shape \[5\]/);
      await expectError(server.infer('m', { id: 'r2', inputs: { INPUT0: fp32([4]) }, priority: 0.5 }), 'INVALID_ARG', /^model 'm' request 'r2': `priority`/);
      await expectError(server.infer('m', { id: 'r3', inputs: { INPUT0: fp32([4]) }, modelVersion: -1 }), 'INVALID_ARG', /^model 'm' request 'r3': `modelVersion`/);
      await expectError(server.infer('m', { inputs: { INPUT0: fp32([5]) } }), 'INVALID_ARG', /^model 'm': input 'INPUT0'/);
    });

    it('refuses a modelVersion that is not a non-negative integer as INVALID_ARG, not NOT_FOUND', async () => {
      const { server } = await serve({ m: { config: testConfig({ extra: 'version_policy { all {} }' }), versions: { 1: '', 2: '' } } });
      for (const modelVersion of ['2', 1.5, -1, NaN]) {
        await expectError(server.infer('m', { inputs: { INPUT0: fp32([4]) }, modelVersion: modelVersion as number }), 'INVALID_ARG', /`modelVersion` must be a non-negative integer/);
      }
      expect((await server.infer('m', { inputs: { INPUT0: fp32([4]) }, modelVersion: 2 })).modelVersion).toBe(2);
    });

    it('takes valid sequence options and priorities', async () => {
      const { server } = await serve({ m: { config: testConfig({}) } });
      for (const options of [{ sequence: { id: 0 } }, { sequence: { id: 'abc', start: true, end: false } }, { priority: 3 }]) {
        await expect(server.infer('m', { inputs: { INPUT0: fp32([4]) }, ...options })).resolves.toBeTruthy();
      }
    });

    it('keeps the shape it checked when the caller changes its array after infer()', async () => {
      const { server } = await serve({ m: { config: testConfig({ dims: [-1] }) } });
      const busy = server.infer('m', { inputs: { INPUT0: fp32([4]) }, parameters: { delay_ms: 20 } });
      const input = fp32([4]);
      const queued = server.infer('m', { inputs: { INPUT0: input } });
      input.shape[0] = 400;
      await busy;
      expect((await queued).outputs.OUTPUT0!.shape).toEqual([4]);
    });

    it('serves data over a SharedArrayBuffer, handing the backend a plain copy', async () => {
      const { server } = await serve({ m: { config: testConfig({}) } });
      const shared = new Float32Array(new SharedArrayBuffer(16));
      shared.set([1, 2, 3, 4]);
      const { outputs } = await server.infer('m', { inputs: { INPUT0: { datatype: 'FP32', shape: [4], data: shared } } });
      expect(Array.from(outputs.OUTPUT0!.data as Float32Array)).toEqual([1, 2, 3, 4]);
      expect((outputs.OUTPUT0!.data as Float32Array).buffer).toBeInstanceOf(ArrayBuffer);
    });

    it("names an unknown model or version NOT_FOUND in Triton's words", async () => {
      const { server } = await serve({ m: { config: testConfig({}) } });
      await expectError(server.infer('nope', { inputs: {} }), 'NOT_FOUND', /^Request for unknown model: 'nope' is not found$/);
      await expectError(server.infer('m', { inputs: { INPUT0: fp32([4]) }, modelVersion: 7 }), 'NOT_FOUND', /^Request for unknown model: 'm' version 7 is not found$/);
    });
  });

  it('fails only the request a backend fails', async () => {
    const { server } = await serve({ m: { config: testConfig({}) } });
    await expectError(server.infer('m', { inputs: { INPUT0: fp32([4]) }, parameters: { fail: 'boom' } }), 'INTERNAL', /asked to fail: boom/);
    await expect(server.infer('m', { inputs: { INPUT0: fp32([4]) } })).resolves.toBeTruthy();
  });

  it('runs N instances concurrently and no more', async () => {
    const { server, probe } = await serve({ m: { config: testConfig({ count: 3 }) } });
    const requests = Array.from({ length: 9 }, () => server.infer('m', { inputs: { INPUT0: fp32([4]) }, parameters: { delay_ms: 20 } }));
    await Promise.all(requests);
    expect(probe.instancesCreated).toEqual(['m_0_0', 'm_0_1', 'm_0_2']);
    expect(probe.maxRunning).toBe(3);
    expect(probe.executions).toBe(9);
  });

  it('runs one request at a time on one instance, in arrival order', async () => {
    const { server, probe } = await serve({ m: { config: testConfig({}) } });
    const order: number[] = [];
    await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        server.infer('m', { inputs: { INPUT0: fp32([4]) }, parameters: { delay_ms: 5 } }).then(() => order.push(i))),
    );
    expect(order).toEqual([0, 1, 2, 3, 4]);
    expect(probe.maxRunning).toBe(1);
  });

  it('cancels a waiting request with its AbortSignal, and the others still run', async () => {
    const { server, probe } = await serve({ m: { config: testConfig({}) } });
    const busy = server.infer('m', { inputs: { INPUT0: fp32([4]) }, parameters: { delay_ms: 50 } });
    const controller = new AbortController();
    const waiting = server.infer('m', { inputs: { INPUT0: fp32([4]) }, signal: controller.signal });
    const after = server.infer('m', { inputs: { INPUT0: fp32([4]) } });
    controller.abort();
    await expectError(waiting, 'CANCELLED', /cancelled/);
    await expect(busy).resolves.toBeTruthy();
    await expect(after).resolves.toBeTruthy();
    expect(probe.executions).toBe(2);
  });

  it('lets many requests share one AbortSignal without a listener each, and aborts them all', async () => {
    const { server } = await serve({ m: { config: testConfig({}) } });
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const controller = new AbortController();
      const done = await Promise.all(
        Array.from({ length: 20 }, () => server.infer('m', { inputs: { INPUT0: fp32([4]) }, signal: controller.signal })),
      );
      expect(done).toHaveLength(20);
      const pending = Array.from({ length: 20 }, () =>
        server.infer('m', { inputs: { INPUT0: fp32([4]) }, parameters: { delay_ms: 5 }, signal: controller.signal }).catch((e: InferenceError) => e.code),
      );
      controller.abort();
      expect(await Promise.all(pending)).toEqual(new Array(20).fill('CANCELLED'));
      await sleep(10);
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('refuses a request whose signal is already aborted', async () => {
    const { server } = await serve({ m: { config: testConfig({}) } });
    await expectError(server.infer('m', { inputs: { INPUT0: fp32([4]) }, signal: AbortSignal.abort() }), 'CANCELLED', /cancelled/);
  });

  it('cancels a running request: the caller hears at once, the backend sees isCancelled', async () => {
    const { server, probe } = await serve({ m: { config: testConfig({}) } });
    const controller = new AbortController();
    const running = server.infer('m', { inputs: { INPUT0: fp32([4]) }, parameters: { delay_ms: 40 }, signal: controller.signal });
    await sleep(10);
    controller.abort();
    await expectError(running, 'CANCELLED', /cancelled/);
    await sleep(50);
    expect(probe.cancelledSeen).toBe(1);
  });

  it('ignores timeoutMicroseconds in the default scheduler, as Triton does', async () => {
    const { server } = await serve({ m: { config: testConfig({}) } });
    const slow = server.infer('m', { inputs: { INPUT0: fp32([4]) }, parameters: { delay_ms: 40 } });
    const waiting = server.infer('m', { inputs: { INPUT0: fp32([4]) }, timeoutMicroseconds: 1_000 });
    await expect(slow).resolves.toBeTruthy();
    await expect(waiting).resolves.toBeTruthy();
  });

  it('fails a request with DEADLINE_EXCEEDED when its AbortSignal.timeout() fires, waiting or running', async () => {
    const { server, probe } = await serve({ m: { config: testConfig({}) } });
    const running = server.infer('m', { inputs: { INPUT0: fp32([4]) }, parameters: { delay_ms: 120 }, signal: AbortSignal.timeout(10) });
    const waiting = server.infer('m', { inputs: { INPUT0: fp32([4]) }, signal: AbortSignal.timeout(10) });
    const started = Date.now();
    await expectError(running, 'DEADLINE_EXCEEDED', /deadline passed/);
    await expectError(waiting, 'DEADLINE_EXCEEDED', /deadline passed/);
    // Answered long before the run ends; the backend sees isCancelled when it does.
    expect(Date.now() - started).toBeLessThan(100);
    await sleep(120);
    expect(probe.executions).toBe(1);
    expect(probe.cancelledSeen).toBe(1);
  });

  it('tells a deadline from a cancellation by the signal\'s reason', async () => {
    const { server } = await serve({ m: { config: testConfig({}) } });
    const timedOut = AbortSignal.abort(new DOMException('late', 'TimeoutError'));
    await expectError(server.infer('m', { inputs: { INPUT0: fp32([4]) }, signal: timedOut }), 'DEADLINE_EXCEEDED', /deadline passed/);
    const other = AbortSignal.abort(new Error('TimeoutError'));
    await expectError(server.infer('m', { inputs: { INPUT0: fp32([4]) }, signal: other }), 'CANCELLED', /cancelled by the caller/);
  });

  it('records statistics in Triton\'s shape', async () => {
    const { server } = await serve({ m: { config: testConfig({ maxBatchSize: 4 }) } });
    await server.infer('m', { inputs: { INPUT0: fp32([2, 4]) } });
    await server.infer('m', { inputs: { INPUT0: fp32([1, 4]) } });
    await server.infer('m', { inputs: { INPUT0: fp32([1, 4]) }, parameters: { fail: 'x' } }).catch(() => {});
    const [stats] = server.statistics('m').model_stats;
    // As in Triton, an execution whose every request failed is not counted as an execution.
    expect(stats).toMatchObject({ name: 'm', version: '1', inference_count: 3, execution_count: 2 });
    expect(stats!.inference_stats.success.count).toBe(2);
    expect(stats!.inference_stats.fail.count).toBe(1);
    expect(stats!.batch_stats.map((b) => [b.batch_size, b.compute_infer.count])).toEqual([[1, 1], [2, 1]]);
    expect(stats!.last_inference).toBeGreaterThan(0);
  });

  it('counts an execution whose response then failed as failed, not executed', async () => {
    const { server } = await serve({
      m: {
        config: `backend: "test"
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] }
output { name: "OUTPUT1" data_type: TYPE_FP32 dims: [ 4 ] }`,
      },
    });
    // The identity backend has no INPUT1 to give OUTPUT1 from.
    await expectError(server.infer('m', { inputs: { INPUT0: fp32([4]) } }), 'INTERNAL', /backend produced no output 'OUTPUT1'/);
    const [stats] = server.statistics('m').model_stats;
    expect(stats).toMatchObject({ inference_count: 0, execution_count: 0 });
    expect(stats!.inference_stats.success.count).toBe(0);
    expect(stats!.inference_stats.fail.count).toBe(1);
    expect(stats!.batch_stats).toEqual([]);
  });
});

describe('outputs checked against the config, as Triton\'s core does', () => {
  /** A backend whose every response is `outputs`, whatever the config says. */
  const fixedOutputs = (outputs: Record<string, Tensor>): Backend => ({
    name: 'fixed',
    async createModel() {
      return { async createInstance() { return { async execute(requests) { return requests.map(() => outputs); } }; } };
    },
  });
  const config = `backend: "fixed"
input { name: "IN" data_type: TYPE_FP32 dims: [ 2 ] }
output { name: "OUT" data_type: TYPE_FP32 dims: [ 2 ] }`;
  const request = { inputs: { IN: fp32([2]) } };
  const fp64 = { datatype: 'FP64' as const, shape: [1, 3], data: new Float64Array(3) };

  async function serveFixed(outputs: Record<string, Tensor>) {
    fx.repo = await TempRepository.create({ m: { config } });
    return (fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, backends: [fixedOutputs(outputs)] }));
  }

  it('fails a request whose response has an output the config does not list, in Triton\'s words', async () => {
    const server = await serveFixed({ OUT: fp32([2]), EXTRA: fp32([2]) });
    await expectError(server.infer('m', request), 'INVALID_ARG', /^unexpected inference output 'EXTRA' for model 'm'$/);
    const [stats] = server.statistics('m').model_stats;
    expect(stats).toMatchObject({ execution_count: 0, inference_count: 0 });
    expect(stats!.inference_stats.fail.count).toBe(1);
  });

  it('passes a datatype and shape that differ from the config through, with one warning per output', async () => {
    const server = await serveFixed({ OUT: fp64 });
    const warnings = captureWarnings();
    for (let i = 0; i < 3; i++) expect((await server.infer('m', request)).outputs.OUT).toEqual(fp64);
    expect(warnings).toEqual([
      {
        code: 'TRITIUM_W010',
        message:
          "model 'm' output 'OUT' has datatype FP64 where the config says FP32 and shape [1,3] where the config says [2]; it is passed through as it is, as Triton does (warned once per loaded model and output)",
      },
    ]);
  });

  it('warns of nothing when outputs match the config', async () => {
    const server = await serveFixed({ OUT: fp32([2]) });
    const warnings = captureWarnings();
    await server.infer('m', request);
    expect(warnings).toEqual([]);
  });
});

describe('inferStream()', () => {
  const decoupled = `backend: "test"
input { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] }
output { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] }
model_transaction_policy { decoupled: true }
parameters { key: "behavior" value { string_value: "repeat" } }`;
  const int32 = { datatype: 'INT32' as const, shape: [1], data: new Int32Array([7]) };

  it('yields every response of a decoupled model, then ends', async () => {
    const { server } = await serve({ rep: { config: decoupled } });
    const values: number[] = [];
    for await (const response of server.inferStream('rep', { inputs: { IN: int32 }, parameters: { count: 3 } })) {
      values.push((response.outputs.OUT!.data as Int32Array)[0]!);
    }
    expect(values).toEqual([7, 7, 7]);
  });

  it('marks the response a model sent with the final flag, and only that one', async () => {
    const { server } = await serve({ rep: { config: decoupled } });
    const flags = async (parameters: InferRequest['parameters']) => {
      const seen: (boolean | undefined)[] = [];
      for await (const response of server.inferStream('rep', { inputs: { IN: int32 }, parameters })) seen.push(response.final);
      return seen;
    };
    expect(await flags({ count: 2, final_with_last: true })).toEqual([false, true]);
    expect(await flags({ count: 2 })).toEqual([false, false]);
  });

  it('yields nothing when a decoupled model sends only the final flag', async () => {
    const { server } = await serve({ rep: { config: decoupled } });
    const responses = [];
    for await (const response of server.inferStream('rep', { inputs: { IN: int32 }, parameters: { count: 0 } })) responses.push(response);
    expect(responses).toEqual([]);
  });

  it('queues the request at once, before the first iteration, and reports a refusal when iterated', async () => {
    const { server, probe } = await serve({ rep: { config: decoupled } });
    const stream = server.inferStream('rep', { inputs: { IN: int32 }, parameters: { count: 1 } });
    await sleep(20);
    expect(probe.executions).toBe(1);
    const values = [];
    for await (const response of stream) values.push(response);
    expect(values).toHaveLength(1);
    const refused = server.inferStream('nope', { inputs: {} });
    await expect(refused.next()).rejects.toThrow("Request for unknown model: 'nope' is not found");
  });

  it('refuses infer() on a decoupled model', async () => {
    const { server } = await serve({ rep: { config: decoupled } });
    await expectError(server.infer('rep', { inputs: { IN: int32 } }), 'UNSUPPORTED', /inferStream/);
  });

  it('yields the one response of an ordinary model', async () => {
    const { server } = await serve({ m: { config: testConfig({}) } });
    const responses = [];
    for await (const response of server.inferStream('m', { inputs: { INPUT0: fp32([4]) } })) responses.push(response);
    expect(responses).toHaveLength(1);
    expect(responses[0]!.final).toBe(true);
  });

  it('cancels the request when the caller stops reading', async () => {
    const { server } = await serve({ rep: { config: decoupled } });
    let seen = 0;
    for await (const _ of server.inferStream('rep', { inputs: { IN: int32 }, parameters: { count: 100, interval_ms: 2 } })) {
      if (++seen === 2) break;
    }
    expect(seen).toBe(2);
    expect(server.statistics('rep').model_stats[0]!.inference_stats.fail.count).toBe(1);
  });
});

describe('stop()', () => {
  it('drains in-flight requests, then refuses new ones', async () => {
    const { server, probe } = await serve({ m: { config: testConfig({}) } });
    const inflight = [1, 2, 3].map(() => server.infer('m', { inputs: { INPUT0: fp32([4]) }, parameters: { delay_ms: 10 } }));
    const stopped = server.stop();
    await expectError(server.infer('m', { inputs: { INPUT0: fp32([4]) } }), 'UNAVAILABLE', /stopping/);
    await expect(Promise.all(inflight)).resolves.toHaveLength(3);
    await stopped;
    expect(server.isLive()).toBe(false);
    expect(probe.instancesFinalized).toEqual(['m_0_0']);
    expect(probe.modelsFinalized).toBe(1);
  });

  it('fails what is left after the exit timeout with UNAVAILABLE', async () => {
    fx.repo = await TempRepository.create({ m: { config: testConfig({}) } });
    const server = (fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, backends: [testBackend()], exitTimeoutMs: 30 }));
    // The 200 ms execution outlasts the exit timeout and the 30 ms given to it after that.
    const warnings = captureWarnings();
    const slow = server.infer('m', { inputs: { INPUT0: fp32([4]) }, parameters: { delay_ms: 200 } });
    const queued = server.infer('m', { inputs: { INPUT0: fp32([4]) } });
    const outcomes = Promise.all([
      expectError(slow, 'UNAVAILABLE', /unloaded before the request completed/),
      expectError(queued, 'UNAVAILABLE', /unloaded before the request completed/),
    ]);
    await server.stop();
    await outcomes;
    expect(warnings).toEqual([{ code: 'TRITIUM_W005', message: expect.stringMatching(/^model 'm' version 1: an execution was still running 30 ms after the exit timeout/) }]);
  });
});

describe('InferenceError', () => {
  it('is recognised across copies of the module (a CJS app with an ESM backend)', () => {
    // What another copy of @tritium/core would construct: same brand, other class.
    const foreign = Object.assign(new Error('x'), { [Symbol.for('tritium.InferenceError')]: true, code: 'INVALID_ARG' });
    expect(foreign).toBeInstanceOf(InferenceError);
    expect(InferenceError.from(foreign)).toBe(foreign);
    expect(new Error('plain')).not.toBeInstanceOf(InferenceError);
  });
});

describe('outputLabels()', () => {
  const labelled = testConfig({ inputs: 2 }).replace('output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] }', 'output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] label_filename: "labels.txt" }');

  it("reads an output's label file once per load, one label per line", async () => {
    const server = await fx.start({ id: { config: labelled } }, { modelControlMode: 'explicit', startupModels: ['id'] });
    await writeFile(join(fx.repo!.path, 'id', 'labels.txt'), 'cat\ndog\r\n\nbird\n');
    expect(await server.outputLabels('id', 'OUTPUT0')).toEqual(['cat', 'dog', '', 'bird']);
    await writeFile(join(fx.repo!.path, 'id', 'labels.txt'), 'changed\n');
    expect(await server.outputLabels('id', 'OUTPUT0')).toEqual(['cat', 'dog', '', 'bird']);
    expect(await server.outputLabels('id', 'OUTPUT1')).toBeUndefined();
    // A reload is a new loaded model, and reads the file again.
    await server.loadModel('id');
    expect(await server.outputLabels('id', 'OUTPUT0')).toEqual(['changed']);
  });

  it('names the model, output and file when the label file cannot be read', async () => {
    const { server } = await serve({ id: { config: labelled } });
    await expectError(server.outputLabels('id', 'OUTPUT0'), 'INTERNAL', /model 'id' output 'OUTPUT0': cannot read its label file 'labels.txt'/);
    await expectError(server.outputLabels('nope', 'OUTPUT0'), 'NOT_FOUND', /nope/);
  });
});
