import { describe, expect, it } from 'vitest';
import type { Tensor } from '@tritium/core';
import { testConfig } from '../helpers/repository.js';
import { rejection, useServerFixture } from '../helpers/server-fixture.js';
import { newProbe, sleep } from '../helpers/test-backend.js';

const fx = useServerFixture();
const fp32 = (...values: number[]): Tensor => ({ datatype: 'FP32', shape: [values.length], data: new Float32Array(values) });
const values = (tensor: Tensor | undefined) => Array.from(tensor!.data as Float32Array);

/** A + B through `adder`, then through `ident` to SUM; A alone through `copier` to COPY (a branch of its own). */
const ENSEMBLE = `platform: "ensemble"
input { name: "A" data_type: TYPE_FP32 dims: [ 4 ] }
input { name: "B" data_type: TYPE_FP32 dims: [ 4 ] }
output { name: "SUM" data_type: TYPE_FP32 dims: [ 4 ] }
output { name: "COPY" data_type: TYPE_FP32 dims: [ 4 ] }
ensemble_scheduling {
  step { model_name: "adder" model_version: -1 input_map { key: "INPUT0" value: "A" } input_map { key: "INPUT1" value: "B" } output_map { key: "OUTPUT0" value: "S" } }
  step { model_name: "ident" model_version: -1 input_map { key: "INPUT0" value: "S" } output_map { key: "OUTPUT0" value: "SUM" } }
  step { model_name: "copier" model_version: -1 input_map { key: "INPUT0" value: "A" } output_map { key: "OUTPUT0" value: "COPY" } }
}`;

function models(delayMs = 0, ensemble = ENSEMBLE) {
  const delay = delayMs ? `parameters { key: "delay_ms" value { string_value: "${delayMs}" } }` : '';
  return {
    adder: { config: testConfig({ name: 'adder', behavior: 'add', inputs: 2, extra: delay }) },
    ident: { config: testConfig({ name: 'ident' }) },
    copier: { config: testConfig({ name: 'copier', extra: delay }) },
    ens: { config: ensemble },
  };
}
const request = { inputs: { A: fp32(1, 2, 3, 4), B: fp32(10, 20, 30, 40) } };

describe('ensembles', () => {
  it('runs the steps, passing tensors between them, and returns only what was asked', async () => {
    const server = await fx.start(models());
    const all = await server.infer('ens', request);
    expect(values(all.outputs.SUM)).toEqual([11, 22, 33, 44]);
    expect(values(all.outputs.COPY)).toEqual([1, 2, 3, 4]);
    const one = await server.infer('ens', { ...request, outputs: ['SUM'] });
    expect(Object.keys(one.outputs)).toEqual(['SUM']);
    // Steps report under their own models' names, as in Triton.
    expect(server.statistics('adder').model_stats[0]!.inference_stats.success.count).toBe(2);
    expect(server.statistics('ens').model_stats[0]!.inference_stats.success.count).toBe(2);
  });

  it('runs independent branches at once', async () => {
    const probe = newProbe();
    const server = await fx.start(models(150), {}, probe);
    const started = Date.now();
    await server.infer('ens', request);
    expect(probe.maxRunning).toBeGreaterThanOrEqual(2);
    expect(Date.now() - started).toBeLessThan(290);
  });

  it('fails the request naming the step and its model when a step fails', async () => {
    const server = await fx.start(models());
    const error = await rejection(server.infer('ens', { ...request, parameters: { fail: 'on purpose' } }));
    expect(error.message).toMatch(/ensemble step \d \(model '(adder|copier)'\) failed: .*asked to fail: on purpose/);
    expect(await server.isModelReady('ens')).toBe(true);
  });

  it('cancels the steps in flight when the request is cancelled, at once', async () => {
    const probe = newProbe();
    const server = await fx.start(models(300), {}, probe);
    const controller = new AbortController();
    const pending = server.infer('ens', { ...request, signal: controller.signal });
    await sleep(30);
    const started = Date.now();
    controller.abort();
    expect((await rejection(pending)).code).toBe('CANCELLED');
    expect(Date.now() - started).toBeLessThan(100);
    await sleep(400);
    expect(probe.cancelledSeen).toBeGreaterThanOrEqual(1); // the running steps saw their cancellation
    expect(probe.executions).toBe(2); // ident never ran
  });

  it('refuses at load an unknown model, a tensor a model does not have, and a datatype that disagrees, naming the step', async () => {
    const broken = {
      unknown: ENSEMBLE.replace('model_name: "ident"', 'model_name: "nobody"'),
      tensor: ENSEMBLE.replace('key: "INPUT0" value: "S"', 'key: "NOPE" value: "S"'),
      datatype: ENSEMBLE.replace('output { name: "SUM" data_type: TYPE_FP32', 'output { name: "SUM" data_type: TYPE_INT32'),
      batching: ENSEMBLE.replace('platform: "ensemble"', 'platform: "ensemble"\nmax_batch_size: 4'),
    };
    const server = await fx.start({ ...models(), ...Object.fromEntries(Object.entries(broken).map(([name, config]) => [name, { config }])) });
    const reason = async (name: string) => (await server.repositoryIndex()).find((e) => e.name === name)!.reason;
    expect(await reason('unknown')).toBe("ensemble 'unknown' depends on 'nobody' which has no loaded version: it is not in the model repository");
    expect(await reason('tensor')).toMatch(/ensemble 'tensor': step 1 \(model 'ident'\) maps input 'NOPE', which model 'ident' does not have/);
    expect(await reason('datatype')).toMatch(/ensemble 'datatype': tensor 'SUM' is TYPE_FP32 as step 1 \(model 'ident'\) output 'OUTPUT0' but TYPE_INT32 as ensemble output/);
    expect(await reason('batching')).toMatch(/ensemble 'batching': tensor 'A' has dims \[-1,4\] as ensemble input but \[4\] as step 0 \(model 'adder'\) input 'INPUT0'/);
    expect(await server.isModelReady('ens')).toBe(true);
  });

  it("fails an explicit load whose steps' models do not serve as Triton's 'load failed for model'", async () => {
    const server = await fx.start(
      { ...models(), pinned: { config: ENSEMBLE.replace('model_name: "ident" model_version: -1', 'model_name: "ident" model_version: 9') } },
      { modelControlMode: 'explicit', startupModels: ['adder', 'ident', 'copier'] },
    );
    expect(await rejection(server.loadModel('pinned'))).toMatchObject({
      code: 'INVALID_ARG',
      message: "load failed for model 'pinned': ensemble 'pinned' depends on 'ident' whose required version 9 is not loaded",
    });
    await server.unloadModel('ident');
    expect(await rejection(server.loadModel('ens'))).toMatchObject({
      code: 'INVALID_ARG',
      message: "load failed for model 'ens': ensemble 'ens' depends on 'ident' which has no loaded version: unloaded",
    });
  });

  it('is UNAVAILABLE, saying why, while a model it uses is unloaded, and ready again once it is back', async () => {
    const server = await fx.start(models(), { modelControlMode: 'explicit', startupModels: ['*'] });
    await server.unloadModel('ident');
    expect(await server.isModelReady('ens')).toBe(false);
    const entry = (await server.repositoryIndex()).find((e) => e.name === 'ens')!;
    expect(entry).toMatchObject({ state: 'UNAVAILABLE', reason: "model 'ident', which the ensemble uses, is not ready" });
    const error = await rejection(server.infer('ens', request));
    expect(error.message).toMatch(/ensemble step 1 \(model 'ident'\) failed: Request for unknown model: 'ident' has no available versions: unloaded/);
    await server.loadModel('ident');
    expect(await server.isModelReady('ens')).toBe(true);
    expect(values((await server.infer('ens', request)).outputs.SUM)).toEqual([11, 22, 33, 44]);
  });

  it("gives the steps the ensemble request's sequence", async () => {
    const probe = newProbe();
    const seq = testConfig({ name: 'ident', maxBatchSize: 4, extra: 'sequence_batching { }' });
    const ensemble = ENSEMBLE.replace(/step \{ model_name: "adder"[^\n]*\n/, '').replace(/step \{ model_name: "copier"[^\n]*\n/, '')
      .replace('value: "S" }', 'value: "A" }')
      .replace('input { name: "B" data_type: TYPE_FP32 dims: [ 4 ] }\n', '')
      .replace('output { name: "COPY" data_type: TYPE_FP32 dims: [ 4 ] }\n', '')
      .replace('platform: "ensemble"', 'platform: "ensemble"\nmax_batch_size: 4');
    const server = await fx.start({ ident: { config: seq }, ens: { config: ensemble } }, {}, probe);
    const response = await server.infer('ens', { inputs: { A: { ...fp32(1, 2, 3, 4), shape: [1, 4] } }, sequence: { id: 42n, start: true, end: true } });
    expect(values(response.outputs.SUM)).toEqual([1, 2, 3, 4]);
    expect(probe.batches.flat().map((r) => r.sequence?.id)).toEqual([42n]);
  });

  it('fails a request whose next step’s model is unloaded while an earlier step runs, naming it', async () => {
    const server = await fx.start(models(200), { modelControlMode: 'explicit', startupModels: ['*'] });
    const pending = server.infer('ens', request);
    await sleep(50);
    await server.unloadModel('ident');
    const error = await rejection(pending);
    expect(error.message).toMatch(/ensemble step 1 \(model 'ident'\) failed: Request for unknown model: 'ident' has no available versions/);
  });

  it('startInference() gives a response and a cancel() that fails the request at once', async () => {
    const server = await fx.start(models(200));
    const running = server.startInference('adder', { inputs: { INPUT0: fp32(1, 2, 3, 4), INPUT1: fp32(1, 1, 1, 1) } });
    running.cancel();
    expect((await rejection(running.response)).code).toBe('CANCELLED');
    const done = server.startInference('ident', { inputs: { INPUT0: fp32(5, 6, 7, 8) } });
    expect(values((await done.response).outputs.OUTPUT0)).toEqual([5, 6, 7, 8]);
    done.cancel(); // after the end: nothing happens
  });

  it('caches the ensemble as a whole when its config enables the response cache', async () => {
    const probe = newProbe();
    const server = await fx.start(models(0, `${ENSEMBLE}\nresponse_cache { enable: true }`), { responseCache: { type: 'local', sizeBytes: 1 << 20 } }, probe);
    await server.infer('ens', request);
    await sleep(5);
    const again = await server.infer('ens', request);
    expect(values(again.outputs.SUM)).toEqual([11, 22, 33, 44]);
    expect(probe.executions).toBe(3); // the three steps ran once
    expect(server.statistics('ens').model_stats[0]!.inference_stats.cache_hit.count).toBe(1);
  });

  it('streams: each response of a decoupled step drives the steps after it, and the ensemble answers each', async () => {
    const repeater = `backend: "test"
input { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] }
output { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] }
model_transaction_policy { decoupled: true }
parameters { key: "behavior" value { string_value: "repeat" } }`;
    const echo = `backend: "test"
input { name: "INPUT0" data_type: TYPE_INT32 dims: [ 1 ] }
output { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 1 ] }`;
    const stream = (decoupled: boolean) => `platform: "ensemble"
input { name: "X" data_type: TYPE_INT32 dims: [ 1 ] }
output { name: "Y" data_type: TYPE_INT32 dims: [ 1 ] }
${decoupled ? 'model_transaction_policy { decoupled: true }' : ''}
ensemble_scheduling {
  step { model_name: "repeater" model_version: -1 input_map { key: "IN" value: "X" } output_map { key: "OUT" value: "R" } }
  step { model_name: "echo" model_version: -1 input_map { key: "INPUT0" value: "R" } output_map { key: "OUTPUT0" value: "Y" } }
}`;
    const probe = newProbe();
    const server = await fx.start({ repeater: { config: repeater }, echo: { config: echo }, stream: { config: stream(true) }, plain: { config: stream(false) } }, {}, probe);
    const responses: number[] = [];
    for await (const response of server.inferStream('stream', { inputs: { X: { datatype: 'INT32', shape: [1], data: new Int32Array([7]) } }, parameters: { count: 3 } })) {
      responses.push((response.outputs.Y!.data as Int32Array)[0]!);
    }
    expect(responses).toEqual([7, 7, 7]);
    expect(probe.ranOn.filter((name) => name.startsWith('echo'))).toHaveLength(3);
    expect((await server.repositoryIndex()).find((e) => e.name === 'plain')!.reason).toMatch(/step 0 \(model 'repeater'\) is decoupled, so the ensemble must be too/);
  });

  it('holds each step to max_inflight_requests across the ensemble’s requests', async () => {
    const probe = newProbe();
    const limited = ENSEMBLE.replace('ensemble_scheduling {', 'ensemble_scheduling {\n  max_inflight_requests: 1');
    const server = await fx.start(
      { ...models(30, limited), adder: { config: testConfig({ name: 'adder', behavior: 'add', inputs: 2, count: 4, extra: 'parameters { key: "delay_ms" value { string_value: "30" } }' }) } },
      {},
      probe,
    );
    await Promise.all(Array.from({ length: 4 }, () => server.infer('ens', request)));
    // adder has 4 instances, but the ensemble lets one of its requests in at a time.
    const adderBatches = probe.batches.filter((batch) => batch[0]!.modelName === 'adder');
    expect(adderBatches).toHaveLength(4);
    // Without the limit the four adder requests run at once (4 instances); with it, one per step: 3 at most.
    expect(probe.maxRunning).toBeLessThanOrEqual(3);
  });

  it('refuses an ensemble that uses itself', async () => {
    const server = await fx.start({ ...models(), self: { config: ENSEMBLE.replace('model_name: "ident"', 'model_name: "self"') } });
    expect((await server.repositoryIndex()).find((e) => e.name === 'self')!.reason).toMatch(/a cycle/);
  });
});
