import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { InferenceError } from '@tritium/core';
import type { Tensor } from '@tritium/core';
import { ServerHarness } from './server-harness.js';
import { fp32, mlpExpected, mlpInput, range } from './helpers.js';

/** Triton's `simple` example config, for the add_sub model. */
const ADD_SUB_CONFIG = (name: string, extra = '') => `
name: "${name}"
platform: "onnxruntime_onnx"
max_batch_size: 8
input [
  { name: "INPUT0" data_type: TYPE_FP32 dims: [ 16 ] },
  { name: "INPUT1" data_type: TYPE_FP32 dims: [ 16 ] }
]
output [
  { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 16 ] },
  { name: "OUTPUT1" data_type: TYPE_FP32 dims: [ 16 ] }
]
dynamic_batching { max_queue_delay_microseconds: 2000 }
${extra}
`;

const values = (t: Tensor | undefined) => Array.from(t!.data as Float32Array);

function closeTo(actual: ArrayLike<number>, expected: ArrayLike<number>, tolerance: number): void {
  expect(actual.length).toBe(expected.length);
  let worst = 0;
  for (let i = 0; i < expected.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!) / Math.max(1, Math.abs(expected[i]!)));
  expect(worst).toBeLessThan(tolerance);
}

async function addSubRoundTrip(harness: ServerHarness, model: string, rows: number, seed: number): Promise<void> {
  const a = range(rows * 16, seed);
  const b = range(rows * 16, 1000 - seed, -3);
  const out = await harness.infer(model, { INPUT0: fp32(a, [rows, 16]), INPUT1: fp32(b, [rows, 16]) });
  expect(out.OUTPUT0!.shape).toEqual([rows, 16]);
  expect(values(out.OUTPUT0)).toEqual(a.map((x, i) => x + b[i]!));
  expect(values(out.OUTPUT1)).toEqual(a.map((x, i) => x - b[i]!));
}

describe('ONNX models through the server (onnxruntime-node)', () => {
  let harness: ServerHarness;
  beforeAll(async () => {
    harness = await ServerHarness.start({
      add_sub: { artifact: 'add_sub', config: ADD_SUB_CONFIG('add_sub') },
      add_sub_auto: { artifact: 'add_sub' },
      add_sub_x3: { artifact: 'add_sub', config: ADD_SUB_CONFIG('add_sub_x3', 'instance_group [ { count: 3 kind: KIND_CPU } ]') },
      add_sub_x3_shared: {
        artifact: 'add_sub',
        config: ADD_SUB_CONFIG(
          'add_sub_x3_shared',
          'instance_group [ { count: 3 kind: KIND_CPU } ]\nparameters { key: "share_session_between_instances" value { string_value: "true" } }',
        ),
      },
      fixed_shape: { artifact: 'fixed_shape' },
      var_batch: { artifact: 'var_batch' },
      tiny: { artifact: 'tiny' },
      mlp: { artifact: 'mlp' },
      external_weights: { artifact: 'external_weights' },
    });
  });
  afterAll(async () => {
    await harness?.stop();
  });

  test('add_sub: OUTPUT0 = a + b, OUTPUT1 = a - b; the description names the runtime', async () => {
    expect(await harness.state('add_sub')).toEqual({ state: 'READY', reason: expect.stringMatching(/^onnxruntime-node 1\.30\.0; one session per instance; auto: on worker threads while its first runs are measured; inline for sizes of input whose runs cost less than the handoff to a worker$/) });
    await addSubRoundTrip(harness, 'add_sub', 1, 0);
    await addSubRoundTrip(harness, 'add_sub', 8, 5);
  });

  test('only the requested outputs come back', async () => {
    const out = await harness.infer('add_sub', { INPUT0: fp32(range(16), [1, 16]), INPUT1: fp32(range(16), [1, 16]) }, ['OUTPUT1']);
    expect(Object.keys(out)).toEqual(['OUTPUT1']);
    expect(values(out.OUTPUT1)).toEqual(new Array(16).fill(0));
  });

  test('concurrent requests of different batch sizes are batched together (auto-complete adds dynamic_batching) and each gets its own rows back', async () => {
    const counts = () => {
      const stats = harness.server.statistics('add_sub').model_stats[0]!;
      return { rows: stats.inference_count, executions: stats.execution_count };
    };
    const before = counts();
    await Promise.all(range(24).map((i) => addSubRoundTrip(harness, 'add_sub', 1 + (i % 3), i * 7)));
    const after = counts();
    expect(after.rows - before.rows).toBe(8 * (1 + 2 + 3));
    expect(after.executions - before.executions).toBeLessThan(24);
  });

  test('auto-complete through the server: batching add_sub gets max_batch_size 4 and dynamic batching', async () => {
    const config = await harness.server.modelConfig('add_sub_auto');
    expect(config).toMatchObject({ max_batch_size: 4, dynamic_batching: expect.any(Object), platform: 'onnxruntime_onnx', backend: 'onnxruntime' });
    expect(config.input?.map((i) => [i.name, i.data_type, i.dims])).toEqual([
      ['INPUT0', 'TYPE_FP32', [16]],
      ['INPUT1', 'TYPE_FP32', [16]],
    ]);
    await addSubRoundTrip(harness, 'add_sub_auto', 4, 3);
  });

  test('instance_group count 3, a session each (the default) or one shared session', async () => {
    expect((await harness.state('add_sub_x3')).reason).toMatch(/one session per instance/);
    expect((await harness.state('add_sub_x3_shared')).reason).toMatch(/one session shared by all instances/);
    await Promise.all(range(30).map((i) => addSubRoundTrip(harness, 'add_sub_x3', 1 + (i % 4), i)));
    await Promise.all(range(30).map((i) => addSubRoundTrip(harness, 'add_sub_x3_shared', 1 + (i % 4), i)));
  });

  test('a model without a batch dimension (fixed shape [2,3] -> [2,4])', async () => {
    const config = await harness.server.modelConfig('fixed_shape');
    expect(config.max_batch_size ?? 0).toBe(0);
    const x = [1, 2, 3, -1, 0.5, 4];
    const out = await harness.infer('fixed_shape', { INPUT0: fp32(x, [2, 3]) });
    const w = (i: number, j: number) => (i * 4 + j - 5) / 4;
    const b = [0.5, -0.5, 1, -1];
    const expected = range(8).map((k) => {
      const [r, c] = [Math.floor(k / 4), k % 4];
      return range(3).reduce((sum, i) => sum + x[r * 3 + i]! * w(i, c), b[c]!);
    });
    expect(out.OUTPUT0!.shape).toEqual([2, 4]);
    closeTo(values(out.OUTPUT0), expected, 1e-6);
  });

  test('a model with a variable batch and a variable length', async () => {
    const run = async (rows: number, len: number, seed: number) => {
      const x = range(rows * len, seed, 0.5);
      const out = await harness.infer('var_batch', { INPUT0: fp32(x, [rows, len]) });
      expect(out.OUTPUT0!.shape).toEqual([rows, len]);
      expect(values(out.OUTPUT0)).toEqual(x.map((v) => 2 * v));
      expect(out.OUTPUT1!.shape).toEqual([rows, 1]);
      expect(values(out.OUTPUT1)).toEqual(range(rows).map((r) => x.slice(r * len, (r + 1) * len).reduce((s, v) => s + v, 0)));
    };
    // Different lengths cannot share a batch; the backend runs each shape group apart.
    await Promise.all([run(2, 5, 0), run(1, 7, 3), run(3, 5, 9), run(1, 1, -4)]);
  });

  test('tiny: INPUT0 + 1', async () => {
    const out = await harness.infer('tiny', { INPUT0: fp32([1, 2, 3], [3, 1]) });
    expect(values(out.OUTPUT0)).toEqual([2, 3, 4]);
  });

  test('the MLP matches its float64 reference', async () => {
    const expected = await mlpExpected();
    const out = await harness.infer('mlp', { INPUT0: fp32(mlpInput(expected.batch), [expected.batch, 256]) });
    expect(out.OUTPUT0!.shape).toEqual([expected.batch, 256]);
    closeTo(values(out.OUTPUT0), expected.output, 1e-4);
  });

  test('external weights in a model.onnx directory', async () => {
    const out = await harness.infer('external_weights', { INPUT0: fp32([1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0, 0, 0], [2, 8]) });
    // Row of ones: column sums of W[i][j] = (8i + j) / 64, plus B[j] = j - 4; unit row 1: W[1][j] + B[j].
    const ones = range(8).map((j) => range(8).reduce((s, i) => s + (8 * i + j) / 64, 0) + j - 4);
    const unit = range(8).map((j) => (8 + j) / 64 + j - 4);
    expect(values(out.OUTPUT0)).toEqual([...ones, ...unit]);
  });
});

describe('onnxruntime-web gives the same numbers as onnxruntime-node', () => {
  let harness: ServerHarness;
  const web = 'parameters { key: "runtime" value { string_value: "web" } }';
  beforeAll(async () => {
    harness = await ServerHarness.start({
      add_sub_web: { artifact: 'add_sub', config: ADD_SUB_CONFIG('add_sub_web', web) },
      mlp_node: { artifact: 'mlp', config: 'name: "mlp_node"\nbackend: "onnxruntime"' },
      mlp_web: { artifact: 'mlp', config: `name: "mlp_web"\nbackend: "onnxruntime"\n${web}` },
      external_web: { artifact: 'external_weights', config: `name: "external_web"\nbackend: "onnxruntime"\n${web}` },
      external_node: { artifact: 'external_weights', config: 'name: "external_node"\nbackend: "onnxruntime"' },
      add_sub_web_x3: { artifact: 'add_sub', config: ADD_SUB_CONFIG('add_sub_web_x3', `${web}\ninstance_group [ { count: 3 kind: KIND_CPU } ]`) },
      metadata_web: { artifact: 'metadata_location', config: `name: "metadata_web"\nbackend: "onnxruntime"\n${web}` },
      subgraph_web: { artifact: 'external_subgraph', config: `name: "subgraph_web"\nbackend: "onnxruntime"\n${web}` },
      subgraph_node: { artifact: 'external_subgraph', config: 'name: "subgraph_node"\nbackend: "onnxruntime"' },
    });
  });
  afterAll(async () => {
    await harness?.stop();
  });

  test('the model parameter `runtime: web` selects onnxruntime-web, and the description says so', async () => {
    expect((await harness.state('mlp_web')).reason).toMatch(/^onnxruntime-web 1\.30\.0 \(WebAssembly\)/);
    expect((await harness.state('mlp_node')).reason).toMatch(/^onnxruntime-node/);
    await addSubRoundTrip(harness, 'add_sub_web', 3, 11);
    await Promise.all(range(10).map((i) => addSubRoundTrip(harness, 'add_sub_web', 1 + (i % 2), i)));
  });

  test('concurrent runs on a shared session and across sessions are serialized in the one wasm module', async () => {
    // Overlapping runs in onnxruntime-web fail ("Cannot read properties of null", "failed to call OrtRun()").
    const expected = await mlpExpected();
    const mlp = async () => {
      const out = await harness.infer('mlp_web', { INPUT0: fp32(mlpInput(expected.batch), [expected.batch, 256]) });
      closeTo(values(out.OUTPUT0), expected.output, 1e-4);
    };
    await Promise.all(range(30).map((i) => (i % 3 === 0 ? mlp() : addSubRoundTrip(harness, 'add_sub_web_x3', 1 + (i % 4), i))));
  });

  test('external data is found by walking the model: metadata named "location" is not a file', async () => {
    expect(await harness.state('metadata_web')).toMatchObject({ state: 'READY' });
    expect(values((await harness.infer('metadata_web', { INPUT0: fp32([1, 41], [2, 1]) })).OUTPUT0)).toEqual([2, 42]);
  });

  test('external data of subgraph tensors: onnxruntime-node serves it, onnxruntime-web 1.30 cannot', async () => {
    // The only external tensors are in the If node's branches; the then branch adds [1, 2, 3, 4].
    expect(values((await harness.infer('subgraph_node', { INPUT0: fp32(range(8), [2, 4]) })).OUTPUT0)).toEqual([1, 3, 5, 7, 5, 7, 9, 11]);
    // The backend hands branch_weights.bin over, but onnxruntime-web checks subgraph
    // external data paths in its own (empty) file system. Upstream limitation, see the README.
    expect(await harness.state('subgraph_web')).toEqual({
      state: 'UNAVAILABLE',
      reason: expect.stringMatching(/model 'subgraph_web': onnxruntime-web .* external data path could not be canonicalized/),
    });
  });

  test('MLP and external weights: web equals native', async () => {
    const x = { INPUT0: fp32(mlpInput(4), [4, 256]) };
    const [native, wasm] = await Promise.all([harness.infer('mlp_node', x), harness.infer('mlp_web', x)]);
    closeTo(values(wasm.OUTPUT0), values(native.OUTPUT0), 1e-5);
    const e = { INPUT0: fp32(range(24, -3, 0.25), [3, 8]) };
    const [en, ew] = await Promise.all([harness.infer('external_node', e), harness.infer('external_web', e)]);
    closeTo(values(ew.OUTPUT0), values(en.OUTPUT0), 1e-6);
  });
});

describe('outputs are answered in the shapes Triton gives them', () => {
  let harness: ServerHarness;
  beforeAll(async () => {
    harness = await ServerHarness.start({
      reduce_sum: { artifact: 'reduce_sum' },
      reduce_sum_batching: {
        artifact: 'reduce_sum',
        config: `name: "reduce_sum_batching"
backend: "onnxruntime"
max_batch_size: 4
input [{ name: "INPUT0" data_type: TYPE_FP32 dims: [1] reshape: { shape: [] } }]
output [{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [1] }]`,
      },
      concat_rows: { artifact: 'concat_rows' },
    });
  });
  afterAll(async () => {
    await harness?.stop();
  });

  test('a scalar model output gets the config dims: [1], or [batch, 1] when batching', async () => {
    expect((await harness.server.modelConfig('reduce_sum')).output?.[0]?.dims).toEqual([1]);
    const out = await harness.infer('reduce_sum', { INPUT0: fp32([1, 2, 3], [3]) });
    expect(out.OUTPUT0).toMatchObject({ shape: [1] });
    expect(values(out.OUTPUT0)).toEqual([6]);
    const batched = await harness.infer('reduce_sum_batching', { INPUT0: fp32([5], [1, 1]) });
    expect(batched.OUTPUT0).toMatchObject({ shape: [1, 1] });
    expect(values(batched.OUTPUT0)).toEqual([5]);
  });

  test('an output whose first dimension is not the batch size fails INTERNAL, naming the model and the output', async () => {
    const x = (rows: number) => ({ INPUT0: fp32(range(rows * 3), [rows, 3]) });
    const fail = (rows: number) => harness.infer('concat_rows', x(rows)).catch((e: unknown) => e);
    // One request alone (scattering had nothing to check), then several that may run as one batch.
    const failures = [await fail(1), ...(await Promise.all([fail(1), fail(2), fail(1)]))];
    for (const error of failures) {
      expect(error).toBeInstanceOf(InferenceError);
      expect(error).toMatchObject({ code: 'INTERNAL', message: expect.stringMatching(/model 'concat_rows' output 'OUTPUT0': the model returned shape \[\d+,3\], whose first dimension should be the batch size \d+/) });
    }
  });
});

describe('models that cannot load are UNAVAILABLE with the reason', () => {
  let harness: ServerHarness;
  beforeAll(async () => {
    harness = await ServerHarness.start({
      good: { artifact: 'tiny' },
      corrupt: { artifact: new Uint8Array(256).map((_, i) => (i * 37 + 11) & 0xff), config: 'name: "corrupt"\nplatform: "onnxruntime_onnx"' },
      corrupt_complete: {
        artifact: new TextEncoder().encode('garbage'),
        config: 'name: "corrupt_complete"\nbackend: "onnxruntime"\ninput [{ name: "INPUT0" data_type: TYPE_FP32 dims: [1] }]\noutput [{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [1] }]',
      },
      missing: { artifact: null, config: 'name: "missing"\nplatform: "onnxruntime_onnx"' },
      mismatch: { artifact: 'add_sub', config: ADD_SUB_CONFIG('mismatch').replace('name: "INPUT1" data_type: TYPE_FP32', 'name: "INPUT1" data_type: TYPE_INT64') },
    });
  });
  afterAll(async () => {
    await harness?.stop();
  });

  test('garbage bytes carry onnxruntime\'s reason', async () => {
    for (const model of ['corrupt', 'corrupt_complete']) {
      const state = await harness.state(model);
      expect(state.state).toBe('UNAVAILABLE');
      expect(state.reason).toMatch(/onnxruntime-node 1\.30\.0 cannot load '.*model\.onnx': /);
    }
  });

  test('a missing model.onnx', async () => {
    const state = await harness.state('missing');
    expect(state.state).toBe('UNAVAILABLE');
    expect(state.reason).toMatch(/unable to find '.*missing\/1\/model\.onnx'/);
  });

  test('a config that contradicts the model names both sides', async () => {
    const state = await harness.state('mismatch');
    expect(state.state).toBe('UNAVAILABLE');
    expect(state.reason).toMatch(/configuration expects datatype TYPE_INT64 for input 'INPUT1', model provides TYPE_FP32/);
  });

  test('the other models still serve', async () => {
    expect((await harness.state('good')).state).toBe('READY');
    expect(values((await harness.infer('good', { INPUT0: fp32([41], [1, 1]) })).OUTPUT0)).toEqual([42]);
  });
});
