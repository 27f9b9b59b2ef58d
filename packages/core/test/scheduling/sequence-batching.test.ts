import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import type { InferRequest, InferenceServer, SequenceOptions } from '@tritium/core';
import { testConfig } from '../helpers/repository.js';
import { rejection, useServerFixture } from '../helpers/server-fixture.js';
import { newProbe, sleep } from '../helpers/test-backend.js';
import { captureWarnings } from '../helpers/warnings.js';

// The sequence batcher end to end, through server.infer(), on the test backend's
// 'accumulate' behavior (OUTPUT0 = INPUT0 + STATE_IN, with STATE_OUT kept by the
// server as the sequence's implicit state). probe.batches shows what the backend got.
const fx = useServerFixture();

const CONTROLS = `
  control_input { name: "START" control { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } }
  control_input { name: "END" control { kind: CONTROL_SEQUENCE_END fp32_false_true: [ 0, 1 ] } }
  control_input { name: "READY" control { kind: CONTROL_SEQUENCE_READY bool_false_true: [ false, true ] } }
  control_input { name: "CORRID" control { kind: CONTROL_SEQUENCE_CORRID data_type: TYPE_UINT64 } }`;
const STATE = (initial = 'zero_data: true') => `
  state { input_name: "STATE_IN" output_name: "STATE_OUT" data_type: TYPE_FP32 dims: [ 1 ]
    initial_state { data_type: TYPE_FP32 dims: [ 1 ] ${initial} name: "initial" } }`;

interface Options {
  strategy?: string;
  count?: number;
  maxBatchSize?: number;
  idleUs?: number;
  controls?: string;
  state?: string;
  exitTimeoutMs?: number;
  delayMs?: number;
}

async function serve(options: Options = {}) {
  const probe = newProbe();
  const batching = `sequence_batching { ${options.strategy ?? ''} max_sequence_idle_microseconds: ${options.idleUs ?? 300000} ${options.controls ?? CONTROLS} ${options.state ?? STATE()} }`;
  const delay = options.delayMs ? `parameters { key: "delay_ms" value { string_value: "${options.delayMs}" } }` : '';
  const config = testConfig({ behavior: 'accumulate', maxBatchSize: options.maxBatchSize ?? 4, count: options.count ?? 1, dims: [1], extra: `${batching}\n${delay}` });
  const server = await fx.start({ acc: { config } }, { exitTimeoutMs: options.exitTimeoutMs ?? 30_000 }, probe);
  const step = (sequence: SequenceOptions, value: number, request: Partial<InferRequest> = {}) =>
    server.infer('acc', { inputs: { INPUT0: { datatype: 'FP32', shape: [1, 1], data: [value] } }, sequence, ...request }).then((r) => (r.outputs.OUTPUT0!.data as Float32Array)[0]);
  return { server, probe, step };
}

/** The first element of a control or state input, as a number. */
const valueOf = (request: { inputs: Readonly<Record<string, { data: ArrayLike<unknown> }>> }, name: string) => Number(request.inputs[name]!.data[0]);

describe('sequence batching', () => {
  it("keeps each sequence's state between its requests, with interleaved sequences apart", async () => {
    const { step } = await serve();
    expect(await step({ id: 1, start: true }, 1)).toBe(1);
    expect(await step({ id: 2, start: true }, 10)).toBe(10);
    expect(await step({ id: 1 }, 2)).toBe(3);
    expect(await step({ id: 2 }, 20)).toBe(30);
    expect(await step({ id: 1, end: true }, 3)).toBe(6);
    expect(await step({ id: 1, start: true }, 5)).toBe(5);
  });

  it('hands the backend START, END, READY and CORRID as ordinary inputs, shaped [1, 1], and the state', async () => {
    const { step, probe } = await serve();
    await step({ id: 7, start: true }, 1);
    await step({ id: 7, end: true }, 2);
    const [first, last] = probe.batches.map((batch) => batch[0]!);
    expect([valueOf(first!, 'START'), valueOf(first!, 'END'), valueOf(first!, 'READY'), valueOf(first!, 'CORRID')]).toEqual([1, 0, 1, 7]);
    expect([valueOf(last!, 'START'), valueOf(last!, 'END'), valueOf(last!, 'STATE_IN')]).toEqual([0, 1, 1]);
    expect(first!.inputs.START!.shape).toEqual([1, 1]);
    expect(first!.inputs.END!.datatype).toBe('FP32');
    expect(first!.inputs.READY!.datatype).toBe('BOOL');
    expect(first!.inputs.CORRID!.datatype).toBe('UINT64');
    expect(first!.requestedOutputs).toContain('STATE_OUT');
  });

  it('takes numeric ids up to 2^64-1 as bigints, and keeps the state output from the caller', async () => {
    const { server, probe } = await serve();
    const id = 2n ** 64n - 1n;
    const response = await server.infer('acc', { inputs: { INPUT0: { datatype: 'FP32', shape: [1, 1], data: [4] } }, sequence: { id, start: true } });
    expect(Object.keys(response.outputs)).toEqual(['OUTPUT0']);
    expect(probe.batches[0]![0]!.inputs.CORRID!.data[0]).toBe(id);
  });

  it('direct: fills the slots of a batch without a request with READY false', async () => {
    const { step, probe } = await serve({ strategy: 'direct { }', delayMs: 20 });
    await Promise.all([step({ id: 1, start: true }, 1), step({ id: 2, start: true }, 1)]);
    probe.batches.length = 0;
    // Sequence 2 holds slot 1; slot 0 (sequence 1) has nothing to run.
    expect(await step({ id: 2 }, 5)).toBe(6);
    const batch = probe.batches.at(-1)!;
    expect(batch.map((request) => valueOf(request, 'READY'))).toEqual([0, 1]);
  });

  it('puts a sequence that finds no free slot in the backlog, and runs it once a slot frees', async () => {
    const { step } = await serve({ maxBatchSize: 1 });
    expect(await step({ id: 1, start: true }, 1)).toBe(1);
    const backlogged = step({ id: 2, start: true }, 100);
    await sleep(20);
    expect(await step({ id: 1, end: true }, 1)).toBe(2);
    expect(await backlogged).toBe(100);
    expect(await step({ id: 2, end: true }, 1)).toBe(101);
  });

  it('oldest: serves many sequences on two instances, each in order', async () => {
    const { step, probe } = await serve({ strategy: 'oldest { max_candidate_sequences: 8 preferred_batch_size: [ 4 ] }', count: 2 });
    const sums = await Promise.all(
      Array.from({ length: 12 }, async (_, s) => {
        let last = 0;
        for (let k = 1; k <= 5; k++) last = (await step({ id: s + 1, start: k === 1, end: k === 5 }, k))!;
        return last;
      }),
    );
    expect(sums).toEqual(Array(12).fill(15));
    expect(Math.max(...probe.batches.map((batch) => batch.length))).toBeGreaterThan(1);
  });

  it('starts afresh, with a warning, when a START comes for a sequence still live', async () => {
    const warnings = captureWarnings();
    const { step } = await serve();
    await step({ id: 3, start: true }, 4);
    expect(await step({ id: 3, start: true }, 1)).toBe(1);
    expect(warnings).toContainEqual({ code: 'TRITIUM_W009', message: expect.stringMatching(/sequence 3 started again before it ended/) });
  });

  it('starts from an initial state read from <model>/initial_state/<data_file>', async () => {
    const probe = newProbe();
    const config = testConfig({ behavior: 'accumulate', maxBatchSize: 4, dims: [1], extra: `sequence_batching { ${CONTROLS} ${STATE('data_file: "start.bin"')} }` });
    const server = await fx.start({}, { modelControlMode: 'explicit' }, probe);
    await fx.repo!.write('acc', { config });
    await mkdir(join(fx.repo!.path, 'acc', 'initial_state'));
    await writeFile(join(fx.repo!.path, 'acc', 'initial_state', 'start.bin'), Buffer.from(new Float32Array([100]).buffer));
    await server.loadModel('acc');
    const response = await server.infer('acc', { inputs: { INPUT0: { datatype: 'FP32', shape: [1, 1], data: [1] } }, sequence: { id: 1, start: true } });
    expect(response.outputs.OUTPUT0!.data[0]).toBe(101);
  });

  describe('bad requests get a clear INVALID_ARG and the model keeps serving', () => {
    it.each<[string, Partial<InferRequest>, RegExp]>([
      ['no sequence', {}, /must give `sequence.id`/],
      ['id 0', { sequence: { id: 0, start: true } }, /must give `sequence.id`, a non-zero integer/],
      ['a string id for a UINT64 CORRID', { sequence: { id: 'abc', start: true } }, /CORRID control takes UINT64 correlation ids, got the string "abc"/],
      ['an id of the wrong type', { sequence: { id: 1.5 as never, start: true } }, /`sequence.id` must be a non-negative integer/],
      ['batch size 2', { inputs: { INPUT0: { datatype: 'FP32', shape: [2, 1], data: [1, 2] } }, sequence: { id: 1, start: true } }, /must have batch size 1, got 2/],
      ['a sequence never started', { sequence: { id: 99 } }, /correlation id 99 is not started/],
    ])('%s', async (_, request, pattern) => {
      const { server, step } = await serve();
      const error = await rejection(server.infer('acc', { inputs: { INPUT0: { datatype: 'FP32', shape: [1, 1], data: [1] } }, ...request }));
      expect(error.code).toBe('INVALID_ARG');
      expect(error.message).toMatch(/model 'acc'/);
      expect(error.message).toMatch(pattern);
      expect(await step({ id: 5, start: true, end: true }, 2)).toBe(2);
    });

    it('a sequence released after max_sequence_idle_microseconds', async () => {
      const { step } = await serve({ idleUs: 20000 });
      await step({ id: 4, start: true }, 1);
      await sleep(60);
      const error = await rejection(step({ id: 4 }, 1));
      expect(error.code).toBe('INVALID_ARG');
      expect(error.message).toMatch(/correlation id 4 is not started .*released after 20000 µs idle/);
      expect(await step({ id: 4, start: true }, 3)).toBe(3);
    });
  });

  describe('stopping with live sequences', () => {
    it('still takes requests of live sequences, refuses new ones, and finishes when they end', async () => {
      const { server, step } = await serve();
      await step({ id: 1, start: true }, 1);
      const stopped = server.stop();
      await sleep(5);
      const refused = await rejection(step({ id: 2, start: true }, 1));
      expect(refused.code).toBe('UNAVAILABLE');
      expect(await step({ id: 1 }, 2)).toBe(3);
      expect(await step({ id: 1, end: true }, 3)).toBe(6);
      await stopped;
      expect((await rejection(step({ id: 1, start: true }, 1))).code).toBe('UNAVAILABLE');
    });

    it('gives up on a sequence that never ends at the exit timeout', async () => {
      const { server, step } = await serve({ exitTimeoutMs: 100 });
      await step({ id: 1, start: true }, 1);
      const started = performance.now();
      await server.stop();
      expect(performance.now() - started).toBeGreaterThanOrEqual(90);
      expect(performance.now() - started).toBeLessThan(2000);
      expect((await rejection(step({ id: 1 }, 1))).code).toBe('UNAVAILABLE');
    });
  });
});
