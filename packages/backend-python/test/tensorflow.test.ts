import { execFileSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { InferenceError, InferenceServer, toFp16, type DataType, type InferResponse, type Tensor } from '@tritium/core';
import { pythonBackend, tensorflowBackend } from '@tritium/backend-python';
import { pythonMissing, shmLeftovers, stubProcesses } from './helpers.js';

const GENERATOR = fileURLToPath(new URL('./tensorflow/make_savedmodels.py', import.meta.url));

/** Why SavedModels cannot be served here (no Python models, no TensorFlow), printed once; undefined when they can. */
const tensorflowMissing: string | undefined = pythonMissing ?? (canImportTensorflow() ? undefined : "python3 cannot import tensorflow (install it with 'python3 -m pip install tensorflow-cpu')");
if (tensorflowMissing) console.warn(`skipping the TensorFlow SavedModel tests: ${tensorflowMissing}`);

function canImportTensorflow(): boolean {
  try {
    execFileSync('python3', ['-c', 'import tensorflow'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

type Expected = Record<string, { inputs: Record<string, unknown[]>; outputs: Record<string, unknown[]> }>;

/** Loading starts a stub that imports TensorFlow: seconds each. */
const SLOW = 90_000;

describe.skipIf(tensorflowMissing)('TensorFlow SavedModel', () => {
  let generated = '';
  let expected: Expected;
  let repo = '';
  let server: InferenceServer | undefined;

  beforeAll(async () => {
    generated = await mkdtemp(join(tmpdir(), 'tritium-savedmodels-'));
    execFileSync('python3', [GENERATOR, generated], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, TF_CPP_MIN_LOG_LEVEL: '3' } });
    expected = JSON.parse(await readFile(join(generated, 'expected.json'), 'utf8')) as Expected;
  }, SLOW);
  afterAll(async () => {
    if (generated) await rm(generated, { recursive: true, force: true });
  });
  afterEach(async () => {
    await server?.stop();
    server = undefined;
    if (repo) await rm(repo, { recursive: true, force: true });
    repo = '';
    expect(await stubProcesses()).toEqual([]);
    expect(shmLeftovers()).toEqual([]);
  });

  /** A repository with the generated model `source` as `name`, its config.pbtxt (if any), and a server with the TensorFlow backend over it. */
  async function serve(models: Array<{ name: string; source?: string; config?: string }>, backends = [tensorflowBackend(), pythonBackend()]): Promise<InferenceServer> {
    repo = await mkdtemp(join(tmpdir(), 'tritium-tf-repo-'));
    for (const { name, source = name, config } of models) {
      await cp(join(generated, source), join(repo, name), { recursive: true });
      if (config !== undefined) await writeFile(join(repo, name, 'config.pbtxt'), config);
    }
    server = await InferenceServer.start({ modelRepository: repo, modelControlMode: 'explicit', backends });
    return server;
  }

  const float32 = (shape: number[], values: unknown[]): Tensor => ({ datatype: 'FP32', shape, data: Float32Array.from((values as number[][]).flat()) });

  it('serves a SavedModel from the config Triton users write, with the outputs TensorFlow computes', async () => {
    const config = `
      name: "add_sub"
      platform: "tensorflow_savedmodel"
      max_batch_size: 8
      input [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "INPUT1" data_type: TYPE_FP32 dims: [ 4 ] } ]
      output [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "OUTPUT1" data_type: TYPE_FP32 dims: [ 4 ] } ]
    `;
    const s = await serve([{ name: 'add_sub', config }]);
    await s.loadModel('add_sub');
    // Triton's TensorFlow auto-complete gives a max_batch_size above 1 with no scheduler the dynamic batcher.
    expect((await s.modelConfig('add_sub')).dynamic_batching).toBeDefined();
    const { inputs, outputs } = expected.add_sub!;
    const response = await s.infer('add_sub', { inputs: { INPUT0: float32([3, 4], inputs.INPUT0!), INPUT1: float32([3, 4], inputs.INPUT1!) } });
    for (const name of ['OUTPUT0', 'OUTPUT1']) {
      expect(response.outputs[name]!.shape).toEqual([3, 4]);
      expect([...(response.outputs[name]!.data as Float32Array)]).toEqual([...Float32Array.from((outputs[name] as number[][]).flat())]);
    }
  }, SLOW);

  it('batches requests through the dynamic batcher into one run, each request getting its own rows', async () => {
    const config = `
      platform: "tensorflow_savedmodel"
      max_batch_size: 8
      dynamic_batching { max_queue_delay_microseconds: 300000 }
    `;
    const s = await serve([{ name: 'add_sub', config }]);
    await s.loadModel('add_sub');
    const rows = [1, 2, 3, 2].map((n, r) => Array.from({ length: n }, (_, i) => [r, i, r * i, -r]));
    const answers = await Promise.all(
      rows.map((row) => s.infer('add_sub', { inputs: { INPUT0: float32([row.length, 4], row), INPUT1: float32([row.length, 4], row) } })),
    );
    answers.forEach((answer, r) => expect([...(answer.outputs.OUTPUT0!.data as Float32Array)]).toEqual(rows[r]!.flat().map((v) => 2 * v)));
    const stats = (await s.statistics('add_sub')).model_stats[0]!;
    expect(stats.inference_count).toBe(8);
    expect(stats.execution_count).toBeLessThan(4);
  }, SLOW);

  it('auto-completes max_batch_size (the backend\'s defaultMaxBatchSize), dynamic batching, inputs and outputs from the signature', async () => {
    expect(() => tensorflowBackend({ defaultMaxBatchSize: -1 })).toThrow(/defaultMaxBatchSize must be a non-negative integer, not -1/);
    const s = await serve(
      [{ name: 'add_sub' }, { name: 'fixed', config: 'platform: "tensorflow_savedmodel"\ndefault_model_filename: "scaled.savedmodel"' }],
      [tensorflowBackend({ defaultMaxBatchSize: 16 })],
    );
    // The config's default_model_filename names the SavedModel directory, for auto-complete and the instances alike.
    await rename(join(repo, 'fixed', '1', 'model.savedmodel'), join(repo, 'fixed', '1', 'scaled.savedmodel'));
    await s.loadModel('add_sub');
    await s.loadModel('fixed');
    const batching = (await s.modelConfig('add_sub'));
    expect(batching.platform).toBe('tensorflow_savedmodel');
    expect(batching.backend).toBe('tensorflow');
    expect(batching.max_batch_size).toBe(16);
    expect(batching.dynamic_batching).toBeDefined();
    expect(batching.input.map((t) => [t.name, t.data_type, t.dims])).toEqual([
      ['INPUT0', 'TYPE_FP32', [4]],
      ['INPUT1', 'TYPE_FP32', [4]],
    ]);
    expect(batching.output.map((t) => [t.name, t.data_type, t.dims])).toEqual([
      ['OUTPUT0', 'TYPE_FP32', [4]],
      ['OUTPUT1', 'TYPE_FP32', [4]],
    ]);
    const fixed = (await s.modelConfig('fixed'));
    expect(fixed.max_batch_size).toBe(0);
    expect(fixed.input.map((t) => [t.name, t.data_type, t.dims])).toEqual([['X', 'TYPE_FP64', [2, 3]]]);
    const { inputs, outputs } = expected.fixed!;
    const response = await s.infer('fixed', { inputs: { X: { datatype: 'FP64', shape: [2, 3], data: Float64Array.from((inputs.X as number[][]).flat()) } } });
    expect([...(response.outputs.Y!.data as Float64Array)]).toEqual((outputs.Y as number[][]).flat());
  }, SLOW);

  it('completes only the outputs a config lists, reads full-rank dims at max_batch_size 0 as no batching, and refuses a max_batch_size the signature cannot batch', async () => {
    const s = await serve([
      { name: 'add_sub', config: 'platform: "tensorflow_savedmodel"\noutput [ { name: "OUTPUT1" } ]' },
      { name: 'fixed', config: 'platform: "tensorflow_savedmodel"\nmax_batch_size: 4' },
      // Dims with the batch dimension at max_batch_size 0: the model is served without batching.
      { name: 'unbatched', source: 'add_sub', config: 'platform: "tensorflow_savedmodel"\ninput [ { name: "INPUT0" dims: [ -1, 4 ] } ]' },
    ]);
    await s.loadModel('add_sub');
    expect((await s.modelConfig('add_sub')).output.map((t) => [t.name, t.data_type, t.dims])).toEqual([['OUTPUT1', 'TYPE_FP32', [4]]]);
    await s.loadModel('unbatched');
    const unbatched = await s.modelConfig('unbatched');
    expect(unbatched.max_batch_size).toBe(0);
    expect([...unbatched.input, ...unbatched.output].map((t) => t.dims)).toEqual([[-1, 4], [-1, 4], [-1, 4], [-1, 4]]);
    const rows = float32([2, 4], [[1, 2, 3, 4], [5, 6, 7, 8]]);
    const answer = await s.infer('unbatched', { inputs: { INPUT0: rows, INPUT1: rows } });
    expect([...(answer.outputs.OUTPUT1!.data as Float32Array)]).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    await expect(s.loadModel('fixed')).rejects.toThrow(/max_batch_size 4 but the signature 'serving_default' has a tensor without a variable first dimension/);
  }, SLOW);

  it('selects the signature by TF_SIGNATURE_DEF and the MetaGraph by TF_GRAPH_TAG', async () => {
    const parameter = (key: string, value: string) => `parameters { key: "${key}" value { string_value: "${value}" } }`;
    const s = await serve([
      { name: 'product', source: 'add_sub', config: `platform: "tensorflow_savedmodel"\n${parameter('TF_SIGNATURE_DEF', 'product')}` },
      { name: 'tagged', config: `platform: "tensorflow_savedmodel"\n${parameter('TF_GRAPH_TAG', 'serve1')}\n${parameter('TF_SIGNATURE_DEF', 'serving2')}` },
      { name: 'untagged', source: 'tagged', config: 'platform: "tensorflow_savedmodel"' },
      { name: 'unsigned', source: 'add_sub', config: `platform: "tensorflow_savedmodel"\n${parameter('TF_SIGNATURE_DEF', 'nope')}` },
    ]);
    await s.loadModel('product');
    expect((await s.modelConfig('product')).output.map((t) => t.name)).toEqual(['PRODUCT']);
    const product = expected.product!;
    const answer = await s.infer('product', { inputs: { A: float32([3, 4], product.inputs.A!), B: float32([3, 4], product.inputs.B!) } });
    expect([...(answer.outputs.PRODUCT!.data as Float32Array)]).toEqual([...Float32Array.from((product.outputs.PRODUCT as number[][]).flat())]);

    await s.loadModel('tagged');
    const tagged = expected.tagged!;
    const out = await s.infer('tagged', { inputs: { IN: { datatype: 'INT32', shape: [2, 3], data: Int32Array.from((tagged.inputs.IN as number[][]).flat()) } } });
    expect([...(out.outputs.OUT!.data as Int32Array)]).toEqual((tagged.outputs.OUT as number[][]).flat());

    await expect(s.loadModel('untagged')).rejects.toThrow(/tags 'serve' could not be found in SavedModel, with available tags '\[\{'serve1'\}\]'/);
    await expect(s.loadModel('unsigned')).rejects.toThrow(/no signature 'nope' \(TF_SIGNATURE_DEF\) under tag 'serve'; it has: product, serving_default/);
  }, SLOW);

  it('serves BYTES (any bytes) and INT32 tensors, auto-completed or listed with a reshape', async () => {
    // The reshape's shape, not the dims, is what the model sees: no hint against batching.
    const listed = 'platform: "tensorflow_savedmodel"\ninput [ { name: "TEXT" data_type: TYPE_STRING dims: [ 1 ] reshape: { shape: [ ] } } ]';
    const s = await serve([{ name: 'strings' }, { name: 'listed', source: 'strings', config: listed }]);
    const { inputs, outputs } = expected.strings!;
    const bytes = (inputs.TEXT as number[][]).map((b) => Uint8Array.from(b));
    for (const name of ['strings', 'listed']) {
      await s.loadModel(name);
      const config = await s.modelConfig(name);
      expect(config.max_batch_size).toBe(4);
      expect(config.input).toMatchObject([{ name: 'TEXT', data_type: 'TYPE_STRING', dims: [1], reshape: { shape: [] } }]);
      const answer = await s.infer(name, { inputs: { TEXT: { datatype: 'BYTES', shape: [bytes.length, 1], data: bytes } } });
      expect(answer.outputs.UPPER!.shape).toEqual([bytes.length, 1]);
      expect((answer.outputs.UPPER!.data as Array<string | Uint8Array>).map((v) => [...Buffer.from(v)])).toEqual(outputs.UPPER);
      expect([...(answer.outputs.LENGTH!.data as Int32Array)]).toEqual(outputs.LENGTH);
    }
  }, SLOW);

  it('serves BOOL, FP16, INT8/16/64 and UINT8/16/32/64 tensors with the values TensorFlow computes', async () => {
    const s = await serve([{ name: 'types' }]);
    await s.loadModel('types');
    const datatypes: Record<string, DataType> = { B: 'BOOL', H: 'FP16', I8: 'INT8', U8: 'UINT8', I16: 'INT16', U16: 'UINT16', I64: 'INT64', U32: 'UINT32', U64: 'UINT64' };
    const config = await s.modelConfig('types');
    expect(config.input.map((t) => [t.name, t.data_type])).toEqual(Object.entries(datatypes).map(([key, type]) => [key, `TYPE_${type}`]).sort());
    const { inputs, outputs } = expected.types!;
    const tensor = (datatype: DataType, rows: unknown[]) => ({ datatype, shape: [2, 2], data: rows.flat() as number[] });
    // What the server makes of those plain values (docs/api.md, "Data types"): FP16 bits, BOOL 0/1, 64-bit integers as bigints.
    const values = (datatype: DataType, rows: unknown[]): unknown[] => {
      const numbers = (rows.flat() as Array<number | boolean>).map(Number);
      if (datatype === 'FP16') return [...toFp16(numbers)];
      return datatype === 'INT64' || datatype === 'UINT64' ? numbers.map(BigInt) : numbers;
    };
    const answer = await s.infer('types', { inputs: Object.fromEntries(Object.entries(datatypes).map(([key, type]) => [key, tensor(type, inputs[key]!)])) });
    for (const [key, type] of Object.entries(datatypes)) {
      const output = answer.outputs[`${key}_OUT`]!;
      expect([output.datatype, output.shape]).toEqual([type, [2, 2]]);
      expect(Array.from(output.data as ArrayLike<unknown>)).toEqual(values(type, outputs[`${key}_OUT`]!));
    }
  }, SLOW);

  it('fails only the request TensorFlow raises for when a batch runs request by request', async () => {
    const s = await serve([{ name: 'checked', config: 'platform: "tensorflow_savedmodel"\nmax_batch_size: 8\ndynamic_batching { max_queue_delay_microseconds: 300000 }' }]);
    await s.loadModel('checked');
    // Items of different shapes cannot be joined: the batch runs request by request.
    const [good, bad] = await Promise.all([
      s.infer('checked', { inputs: { X: float32([1, 2], [[4, 9]]) } }),
      s.infer('checked', { inputs: { X: float32([1, 3], [[1, -1, 1]]) } }).catch((error: unknown) => error),
    ]);
    expect([...((good as InferResponse).outputs.ROOT!.data as Float32Array)]).toEqual([2, 3]);
    expect(bad).toBeInstanceOf(InferenceError);
    expect((bad as Error).message).toMatch(/X must not be negative/);
    expect((await s.statistics('checked')).model_stats[0]!.execution_count).toBe(1);
  }, SLOW);

  it('feeds the sequence batcher\'s controls to the signature inputs they name, leaving them out of auto-complete', async () => {
    const sequence = (pair: string) => `platform: "tensorflow_savedmodel"\nmax_batch_size: 4\nsequence_batching { control_input [ { name: "START" control [ { kind: CONTROL_SEQUENCE_START ${pair}: [ 0, 1 ] } ] } ] }`;
    const s = await serve([
      { name: 'started', config: sequence('int32_false_true') },
      { name: 'mistyped', source: 'started', config: sequence('fp32_false_true') },
    ]);
    await s.loadModel('started');
    const config = await s.modelConfig('started');
    expect(config.input.map((t) => t.name)).toEqual(['INPUT']);
    expect(config.dynamic_batching).toBeUndefined();
    const three = float32([1, 1], [[3]]);
    const first = await s.infer('started', { inputs: { INPUT: three }, sequence: { id: 7, start: true } });
    const next = await s.infer('started', { inputs: { INPUT: three }, sequence: { id: 7, end: true } });
    expect([[...(first.outputs.OUTPUT!.data as Float32Array)], [...(next.outputs.OUTPUT!.data as Float32Array)]]).toEqual([[6], [3]]);
    await expect(s.loadModel('mistyped')).rejects.toThrow(/sequence control 'START' has data_type TYPE_FP32 in the config but TYPE_INT32 \(int32\) in the signature/);
  }, SLOW);

  it('refuses a wrong datatype or shape with INVALID_ARG and keeps serving', async () => {
    const s = await serve([{ name: 'add_sub' }]);
    await s.loadModel('add_sub');
    const good = float32([1, 4], [[1, 2, 3, 4]]);
    const wrongType: Tensor = { datatype: 'INT32', shape: [1, 4], data: new Int32Array(4) };
    const wrongShape = float32([1, 5], [[1, 2, 3, 4, 5]]);
    await expect(s.infer('add_sub', { inputs: { INPUT0: wrongType, INPUT1: good } })).rejects.toMatchObject({ code: 'INVALID_ARG' });
    await expect(s.infer('add_sub', { inputs: { INPUT0: wrongShape, INPUT1: good } })).rejects.toMatchObject({ code: 'INVALID_ARG' });
    const answer = await s.infer('add_sub', { inputs: { INPUT0: good, INPUT1: good } });
    expect([...(answer.outputs.OUTPUT0!.data as Float32Array)]).toEqual([2, 4, 6, 8]);
  }, SLOW);

  it('fails to load a corrupt or empty SavedModel, naming it, leaves no stub behind, and keeps serving the others', async () => {
    const complete = 'platform: "tensorflow_savedmodel"\nmax_batch_size: 8\ninput [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "INPUT1" data_type: TYPE_FP32 dims: [ 4 ] } ]\noutput [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]';
    const s = await serve([
      // Auto-complete reads this one; the instance reads the other two.
      { name: 'corrupt', source: 'add_sub', config: 'platform: "tensorflow_savedmodel"\nmax_batch_size: 8' },
      { name: 'garbled', source: 'add_sub', config: complete },
      { name: 'empty', source: 'add_sub', config: complete },
      { name: 'add_sub' },
    ]);
    for (const name of ['corrupt', 'garbled']) await writeFile(join(repo, name, '1', 'model.savedmodel', 'saved_model.pb'), 'not a protobuf');
    await rm(join(repo, 'empty', '1', 'model.savedmodel'), { recursive: true });
    await mkdir(join(repo, 'empty', '1', 'model.savedmodel'));
    for (const name of ['corrupt', 'garbled', 'empty']) {
      const failure = await s.loadModel(name).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(InferenceError);
      expect((failure as Error).message).toMatch(name === 'empty' ? /SavedModel file does not exist/ : /saved_model\.pb/);
      expect((failure as Error).message).toContain(join(repo, name, '1', 'model.savedmodel'));
      expect(await stubProcesses()).toEqual([]);
    }
    await s.loadModel('add_sub');
    expect(await s.isModelReady('add_sub')).toBe(true);
  }, SLOW);

  // Eight loads, each a stub importing TensorFlow: ~80 s on the 2-core machine when idle (no
  // faster at once, the imports being CPU-bound), and 106 s once under other load.
  it('fails the load naming the tensor whose config type or shape disagrees with the signature, or that the signature lacks', async () => {
    const tensors = (input: string, output = '{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] }', more = '') =>
      `platform: "tensorflow_savedmodel"\nmax_batch_size: 8\ninput [ ${input}, { name: "INPUT1" data_type: TYPE_FP32 dims: [ 4 ] } ]\noutput [ ${output} ]\n${more}`;
    const input0 = '{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] }';
    const s = await serve([
      { name: 'typed', source: 'add_sub', config: tensors('{ name: "INPUT0" data_type: TYPE_INT32 dims: [ 4 ] }') },
      { name: 'named', source: 'add_sub', config: tensors('{ name: "IN0" data_type: TYPE_FP32 dims: [ 4 ] }') },
      { name: 'wide', source: 'add_sub', config: tensors('{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 5 ] }') },
      { name: 'ranked', source: 'add_sub', config: tensors('{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 2, 2 ] }') },
      // An output's shape is compared exactly: the signature's 4 is not the config's -1.
      { name: 'loose', source: 'add_sub', config: tensors(input0, '{ name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] }') },
      { name: 'fixed', config: 'platform: "tensorflow_savedmodel"\ninput [ { name: "X" data_type: TYPE_FP64 dims: [ 3, 2 ] } ]\noutput [ { name: "Y" data_type: TYPE_FP64 dims: [ 2, 3 ] } ]' },
      { name: 'optional', source: 'add_sub', config: tensors('{ name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] optional: true }') },
      { name: 'accelerated', source: 'add_sub', config: tensors(input0, undefined, 'optimization { execution_accelerators { cpu_execution_accelerator [ { name: "openvino" } ] } }') },
    ]);
    await expect(s.loadModel('typed')).rejects.toThrow(/input 'INPUT0' has data_type TYPE_INT32 in the config but TYPE_FP32 \(float32\) in the signature/);
    await expect(s.loadModel('named')).rejects.toThrow(/input 'IN0' is not in the signature; its inputs are: INPUT0, INPUT1/);
    await expect(s.loadModel('wide')).rejects.toThrow(/input 'INPUT0' has shape \[-1, 5\] in the config \(a -1 batch dimension.*\) but \[-1, 4\] in the signature/);
    await expect(s.loadModel('ranked')).rejects.toThrow(/input 'INPUT0' has shape \[-1, 2, 2\] in the config .* but \[-1, 4\] in the signature/);
    await expect(s.loadModel('loose')).rejects.toThrow(/output 'OUTPUT0' has shape \[-1, -1\] in the config .* but \[-1, 4\] in the signature/);
    await expect(s.loadModel('fixed')).rejects.toThrow(/input 'X' has shape \[3, 2\] in the config but \[2, 3\] in the signature/);
    await expect(s.loadModel('optional')).rejects.toThrow(/the signature needs every input in each run, but the config makes these optional: INPUT0/);
    await expect(s.loadModel('accelerated')).rejects.toMatchObject({ code: 'INVALID_ARG', message: expect.stringMatching(/CPU execution accelerators \(openvino\) are not supported/) });
    expect(await stubProcesses()).toEqual([]);
  }, 2 * SLOW);

  it('fails the requests of a batch whose output has no row per input row, instead of splitting it wrongly, and keeps serving', async () => {
    const s = await serve([{ name: 'flatten', config: 'platform: "tensorflow_savedmodel"\nmax_batch_size: 8\ndynamic_batching { max_queue_delay_microseconds: 300000 }' }, { name: 'add_sub' }]);
    await s.loadModel('flatten');
    await s.loadModel('add_sub');
    const one = float32([1, 4], [[1, 2, 3, 4]]);
    const failures = await Promise.all([0, 1].map(() => s.infer('flatten', { inputs: { X: one } }).catch((error: unknown) => error)));
    for (const failure of failures) {
      expect(failure).toBeInstanceOf(InferenceError);
      expect((failure as Error).message).toMatch(/output 'FLAT' has shape \[\d+\] for a batch of \d+ rows: its first dimension must be the batch/);
    }
    const answer = await s.infer('add_sub', { inputs: { INPUT0: one, INPUT1: one } });
    expect([...(answer.outputs.OUTPUT1!.data as Float32Array)]).toEqual([0, 0, 0, 0]);
  }, SLOW);

  it('sizes TensorFlow\'s thread pools by TF_NUM_INTRA_THREADS and TF_NUM_INTER_THREADS, and refuses a value that is not a count', async () => {
    const parameter = (key: string, value: string) => `parameters { key: "${key}" value { string_value: "${value}" } }`;
    const base = 'platform: "tensorflow_savedmodel"\ninstance_group [ { count: 1 kind: KIND_CPU } ]';
    const s = await serve([
      { name: 'threaded', source: 'add_sub', config: `${base}\n${parameter('TF_NUM_INTRA_THREADS', '24')}\n${parameter('TF_NUM_INTER_THREADS', '24')}` },
      { name: 'plain', source: 'add_sub', config: base },
      { name: 'negative', source: 'add_sub', config: `${base}\n${parameter('TF_NUM_INTRA_THREADS', '-1')}` },
      { name: 'wordy', source: 'add_sub', config: `${base}\n${parameter('TF_NUM_INTER_THREADS', 'many')}` },
    ]);
    const one = float32([1, 4], [[1, 2, 3, 4]]);
    /** The threads of the model's one stub once it has run an op (the pools exist from the first op on). */
    const stubThreads = async (model: string): Promise<number> => {
      await s.loadModel(model);
      await s.infer(model, { inputs: { INPUT0: one, INPUT1: one } });
      const [pid] = await stubProcesses();
      const threads = (await readdir(`/proc/${pid}/task`)).length;
      await s.unloadModel(model);
      return threads;
    };
    // Two pools of 24 on top of the stub's own threads; TensorFlow's default sizes them by the cores.
    expect(await stubThreads('threaded')).toBeGreaterThanOrEqual(48);
    expect(await stubThreads('plain')).toBeLessThan(24 + availableParallelism() * 2);
    await expect(s.loadModel('negative')).rejects.toThrow(/parameter 'TF_NUM_INTRA_THREADS' must be a non-negative integer, not '-1'/);
    await expect(s.loadModel('wordy')).rejects.toThrow(/parameter 'TF_NUM_INTER_THREADS' must be a non-negative integer, not 'many'/);
  }, SLOW);

  it('leaves no stub, shared memory or thread behind when unloaded, and loads again', async () => {
    const s = await serve([{ name: 'add_sub' }]);
    const threads: number[] = [];
    for (let round = 0; round < 3; round++) {
      await s.loadModel('add_sub');
      // One stub per instance: Triton's default CPU instance group may hold several.
      const instances = (await s.modelConfig('add_sub')).instance_group.reduce((count, group) => count + group.count, 0);
      expect((await stubProcesses()).length).toBe(instances);
      await s.unloadModel('add_sub');
      expect(await stubProcesses()).toEqual([]);
      expect(shmLeftovers()).toEqual([]);
      threads.push((await readdir('/proc/self/task')).length);
    }
    // The server's own threads do not grow with each load and unload.
    expect(threads[2]).toBeLessThanOrEqual(threads[1]!);
  }, SLOW);

  it('fails the load (Triton\'s words, then ours naming the pip install) where the interpreter has no TensorFlow', async () => {
    // A tensorflow package that fails to import stands for one that is not installed.
    const fake = await mkdtemp(join(tmpdir(), 'tritium-no-tf-'));
    await mkdir(join(fake, 'tensorflow'));
    await writeFile(join(fake, 'tensorflow', '__init__.py'), 'raise ImportError("No module named \'tensorflow\'")\n');
    const saved = process.env.PYTHONPATH;
    process.env.PYTHONPATH = fake;
    try {
      const s = await serve([{ name: 'add_sub', config: 'platform: "tensorflow_savedmodel"\nmax_batch_size: 8' }]);
      await expect(s.loadModel('add_sub')).rejects.toMatchObject({ code: 'INTERNAL', message: expect.stringMatching(/^failed to load 'add_sub', failed to poll from model repository: .*TensorFlow is not installed for .*-m pip install tensorflow-cpu/) });
    } finally {
      if (saved === undefined) delete process.env.PYTHONPATH;
      else process.env.PYTHONPATH = saved;
      await rm(fake, { recursive: true, force: true });
    }
  }, SLOW);

  it('refuses tensorflow_graphdef, and is found by name when no backend is passed', async () => {
    const s = await serve([{ name: 'graphdef', source: 'add_sub', config: 'platform: "tensorflow_graphdef"\ndefault_model_filename: "model.savedmodel"\nmax_batch_size: 8\ninput [ { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]\noutput [ { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] } ]' }, { name: 'add_sub' }], []);
    await expect(s.loadModel('graphdef')).rejects.toMatchObject({ message: expect.stringMatching(/graphdef/i) });
    await s.loadModel('add_sub');
    expect(await s.isModelReady('add_sub')).toBe(true);
  }, SLOW);
});
