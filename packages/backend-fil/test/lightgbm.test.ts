import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { InferenceServer } from '@tritium/core';
import { filBackend } from '@tritium/backend-fil';
import { countingTurns } from '../../core/test/helpers/loop-turns.js';
import { TempRepository } from '../../core/test/helpers/repository.js';
import { predict } from '../src/forest.js';
import { ForestPool } from '../src/forest-pool.js';
import { sumTrees } from '../src/forest-walk.mjs';
import type { Forest } from '../src/forest.js';
import { readLightGbm } from '../src/lightgbm.js';
import { predictYielding } from '../src/yielding-predict.js';
import { filConfig, maxRelativeError, referenceCases } from './helpers.js';
import type { ReferenceCase } from './helpers.js';

const references = await referenceCases('lightgbm_models.py', ['model.txt'], 'python3 with lightgbm');
if ('missing' in references) console.log(`skipping LightGBM reference tests: ${references.missing}`);
const cases = 'cases' in references ? references.cases : [];
const byName = (name: string) => cases.find((c) => c.name === name)!;
/** The sums the event loop's own walk gives: untransformed, as a pool's (predict() applies the objective's transform). */
function sumsOnLoop(forest: Forest, x: Float32Array, rows: number): Float64Array {
  const out = new Float64Array(rows * forest.numGroups);
  sumTrees(forest, x, rows, out);
  return out;
}

/** A reference case's rows, `copies` times over: a batch large enough to split or slice. */
function repeated(reference: ReferenceCase, copies: number): { x: Float32Array; rows: number } {
  const x = new Float32Array(reference.x.length * copies);
  for (let i = 0; i < copies; i++) x.set(reference.x, i * reference.x.length);
  return { x, rows: reference.rows * copies };
}

describe.skipIf(cases.length === 0)('LightGBM model.txt against lightgbm.predict', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, reference: ReferenceCase) => {
    const forest = readLightGbm(reference.modelText, 'model.txt');
    expect(forest.numFeatures).toBe(reference.features);
    const predictions = predict(forest, reference.x, reference.rows);
    expect(predictions.length).toBe(reference.expected.length);
    expect(maxRelativeError(predictions, reference.expected)).toBeLessThan(1e-9);
  });
});

describe.skipIf(cases.length === 0)('a damaged model.txt', () => {
  it('fails the load rather than losing a tree', () => {
    const text = byName('regression').modelText;
    expect(text).toMatch(/^tree_sizes=/m);
    // A damaged Tree= line would merge two trees into one block.
    expect(() => readLightGbm(text.replace('\nTree=1\n', '\nXree=1\n'), 'model.txt')).toThrow(/tree 0 has '.*' twice/);
    const lastTree = text.lastIndexOf('Tree=');
    const withoutLast = text.slice(0, lastTree) + text.slice(text.indexOf('end of trees'));
    expect(() => readLightGbm(withoutLast, 'model.txt')).toThrow(/11 trees, but tree_sizes lists 12/);
    expect(() => readLightGbm(text.replace('\nTree=2\n', '\nTree=7\n'), 'model.txt')).toThrow(/after tree 1 is numbered '7'/);
    expect(() => readLightGbm(text.replace(/^threshold=\S+/m, 'threshold=nan'), 'model.txt')).toThrow(/threshold is NaN/);
    expect(() => readLightGbm(text.replace(/^max_feature_idx=.*$/m, 'max_feature_idx='), 'model.txt')).toThrow(/max_feature_idx '' is not a number/);
    expect(() => readLightGbm(text.replace(/^num_leaves=.*$/m, 'num_leaves=0').replace(/^leaf_value=.*$/m, 'leaf_value='), 'model.txt')).toThrow(/tree 0 has num_leaves 0/);
    // Missing type 3 does not exist.
    expect(() => readLightGbm(text.replace(/^decision_type=\d+/m, 'decision_type=12'), 'model.txt')).toThrow(/decision_type 12, not a LightGBM one/);
  });
});

describe.skipIf(cases.length === 0)('a large batch', () => {
  it('is evaluated in slices that let the event loop turn, with the same results', async () => {
    const reference = byName('multiclass');
    const forest = readLightGbm(reference.modelText, 'model.txt');
    const { x, rows } = repeated(reference, 200);
    const { result: predictions, turns } = await countingTurns(() => predictYielding(forest, x, rows));
    expect(turns).toBeGreaterThan(1);
    expect(predictions).toEqual(predict(forest, x, rows));
  });
});

describe.skipIf(cases.length === 0)('ForestPool', () => {
  it("sums a batch's rows across threads as one thread does, for several forests on the same threads, and refuses a forest's work once it left", async () => {
    const regression = byName('regression');
    const multiclass = byName('multiclass');
    const first = readLightGbm(regression.modelText, 'model.txt');
    const second = readLightGbm(multiclass.modelText, 'model.txt');
    const tasks = readdirSync('/proc/self/task').length;
    const pool = new ForestPool(3);
    const a = pool.add(first, "model 'a'");
    const b = pool.add(second, "model 'b'");
    const [sumsA, sumsB] = await Promise.all([a.sums(regression.x, regression.rows, 3), b.sums(multiclass.x, multiclass.rows, 2)]);
    expect(sumsA).toEqual(sumsOnLoop(first, regression.x, regression.rows));
    expect(sumsB).toEqual(sumsOnLoop(second, multiclass.x, multiclass.rows));
    // Both forests ran on the pool's threads: three at most, whatever the number of forests.
    expect([pool.threadCount, readdirSync('/proc/self/task').length]).toEqual([3, tasks + 3]);
    // A batch in flight when its forest leaves is refused, not left unsettled; the other forest keeps its threads.
    const inFlight = expect(a.sums(regression.x, regression.rows, 3)).rejects.toMatchObject({ code: 'UNAVAILABLE', message: "model 'a': the model was unloaded" });
    await a.release();
    await inFlight;
    await expect(a.sums(regression.x, regression.rows, 3)).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    expect(await b.sums(multiclass.x, multiclass.rows, 3)).toEqual(sumsB);
    // The last forest to leave ends the threads.
    await b.release();
    expect([pool.threadCount, readdirSync('/proc/self/task').length]).toEqual([0, tasks]);
  });

  it('fails the batches a dead thread had a share of, naming their model, and starts another thread for the next batch', async () => {
    const regression = byName('regression');
    const forest = readLightGbm(regression.modelText, 'model.txt');
    const { x, rows } = repeated(regression, 2000);
    const pool = new ForestPool(2);
    const pooled = pool.add(forest, "model 'r'");
    try {
      const batch = pooled.sums(x, rows, 2);
      // A thread dying as a native crash would: the one thread the test can reach from outside.
      const [thread] = (pool as unknown as { threads: Array<{ worker: { terminate(): Promise<number> } }> }).threads;
      await thread!.worker.terminate();
      await expect(batch).rejects.toMatchObject({ code: 'INTERNAL', message: expect.stringMatching(/^model 'r': a worker thread exited \(code \d+\)$/) });
      expect(pool.threadCount).toBe(1);
      expect(await pooled.sums(regression.x, regression.rows, 2)).toEqual(sumsOnLoop(forest, regression.x, regression.rows));
      expect(pool.threadCount).toBe(2);
    } finally {
      await pooled.release();
    }
  });
});

describe.skipIf(cases.length === 0)('a Triton repository of LightGBM models', () => {
  let repository: TempRepository;
  let server: InferenceServer;
  const model = async (name: string, reference: ReferenceCase, outputWidth: number, parameters: Record<string, string> = {}, extra = '') => {
    const directory = join(repository.path, name);
    await mkdir(join(directory, '1'), { recursive: true });
    await writeFile(join(directory, 'config.pbtxt'), filConfig({ name, modelType: 'lightgbm', features: reference.features, outputWidth, parameters, extra }));
    await writeFile(join(directory, '1', 'model.txt'), reference.modelText);
  };
  const infer = async (name: string, x: Float32Array, rows: number) => {
    const response = await server.infer(name, { inputs: { input__0: { datatype: 'FP32', shape: [rows, x.length / rows], data: x } } });
    return response.outputs.output__0!;
  };

  beforeAll(async () => {
    repository = await TempRepository.create();
    await model('regression', byName('regression'), 1);
    await model('multiclass_proba', byName('multiclass'), 3, { is_classifier: 'true', predict_proba: 'true' });
    await model('multiclass_class', byName('multiclass'), 1, { output_class: 'true' });
    await model('binary_proba', byName('binary'), 2, { is_classifier: 'true', predict_proba: 'true' });
    await model('binary_class', byName('binary'), 1, { is_classifier: 'true', threshold: '0.3', algo: 'TREE_REORG' });
    await model('binary_single', byName('binary'), 1, { is_classifier: 'true', predict_proba: 'true' });
    await model('batched', byName('regression'), 1, {}, 'dynamic_batching { max_queue_delay_microseconds: 20000 }');
    // output_class and algo are warned of at load (parameters.test.ts checks those warnings): kept quiet here.
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      server = await InferenceServer.start({ modelRepository: repository.path, modelControlMode: 'explicit', startupModels: ['regression', 'multiclass_proba', 'multiclass_class', 'binary_proba', 'binary_class', 'binary_single', 'batched'], backends: [filBackend()], logger: { error() {}, warn() {}, info() {}, verbose() {} } });
    } finally {
      warnings.mockRestore();
    }
  });
  afterAll(async () => {
    await server?.stop();
    await repository?.remove();
  });

  it('serves regression predictions as LightGBM computes them', async () => {
    const reference = byName('regression');
    const output = await infer('regression', reference.x, reference.rows);
    expect(output.shape).toEqual([reference.rows, 1]);
    expect(maxRelativeError(output.data as Float32Array, reference.expected)).toBeLessThan(1e-6);
  });

  it('gives class probabilities, or the class, as FIL does', async () => {
    const multi = byName('multiclass');
    const proba = await infer('multiclass_proba', multi.x, multi.rows);
    expect(proba.shape).toEqual([multi.rows, 3]);
    expect(maxRelativeError(proba.data as Float32Array, multi.expected)).toBeLessThan(1e-6);
    const classes = (await infer('multiclass_class', multi.x, multi.rows)).data as Float32Array;
    for (let r = 0; r < multi.rows; r++) {
      const row = Array.from(multi.expected.subarray(r * 3, r * 3 + 3));
      expect(classes[r]).toBe(row.indexOf(Math.max(...row)));
    }
    const binary = byName('binary');
    const pair = (await infer('binary_proba', binary.x, binary.rows)).data as Float32Array;
    const decided = (await infer('binary_class', binary.x, binary.rows)).data as Float32Array;
    const single = await infer('binary_single', binary.x, binary.rows);
    expect(single.shape).toEqual([binary.rows, 1]);
    expect(maxRelativeError(single.data as Float32Array, binary.expected)).toBeLessThan(1e-6);
    for (let r = 0; r < binary.rows; r++) {
      const p = binary.expected[r]!;
      expect(pair[2 * r + 1]).toBeCloseTo(p, 6);
      expect(pair[2 * r]).toBeCloseTo(1 - p, 6);
      expect(decided[r]).toBe(p > 0.3 ? 1 : 0);
    }
  });

  it('serves a model without batching, one row per request', async () => {
    const reference = byName('regression');
    await model('unbatched', reference, 1, {}, '');
    await writeFile(join(repository.path, 'unbatched', 'config.pbtxt'), filConfig({ name: 'unbatched', modelType: 'lightgbm', features: 5, outputWidth: 1, maxBatchSize: 0 }));
    await server.loadModel('unbatched');
    const response = await server.infer('unbatched', { inputs: { input__0: { datatype: 'FP32', shape: [5], data: reference.x.slice(5, 10) } } });
    expect(response.outputs.output__0!.shape).toEqual([1]);
    expect(maxRelativeError(response.outputs.output__0!.data as Float32Array, reference.expected.subarray(1, 2))).toBeLessThan(1e-6);
  });

  it('batches single rows under the dynamic batcher with the same results', async () => {
    const reference = byName('regression');
    const rows = Array.from({ length: 40 }, (_, r) => infer('batched', reference.x.slice(r * 5, r * 5 + 5), 1));
    const outputs = await Promise.all(rows);
    const values = outputs.map((o) => (o.data as Float32Array)[0]!);
    expect(maxRelativeError(values, reference.expected.subarray(0, 40))).toBeLessThan(1e-6);
    const stats = (await server.statistics('batched')).model_stats[0]!;
    expect(stats.execution_count).toBeLessThan(40);
  });

  it('refuses inputs of the wrong datatype or shape and keeps serving', async () => {
    await expect(server.infer('regression', { inputs: { input__0: { datatype: 'INT32', shape: [1, 5], data: new Int32Array(5) } } })).rejects.toMatchObject({ code: 'INVALID_ARG' });
    await expect(server.infer('regression', { inputs: { input__0: { datatype: 'FP32', shape: [1, 4], data: new Float32Array(4) } } })).rejects.toMatchObject({ code: 'INVALID_ARG' });
    const reference = byName('regression');
    expect(maxRelativeError((await infer('regression', reference.x.slice(0, 5), 1)).data as Float32Array, reference.expected.subarray(0, 1))).toBeLessThan(1e-6);
  });

  it('fails to load a corrupt or mismatched model with a clear reason', async () => {
    const reference = byName('regression');
    await model('corrupt', reference, 1);
    await writeFile(join(repository.path, 'corrupt', '1', 'model.txt'), reference.modelText.replace(/^threshold=.*$/m, 'threshold=1 oops'));
    await expect(server.loadModel('corrupt')).rejects.toThrow(/threshold/);
    await writeFile(join(repository.path, 'corrupt', '1', 'model.txt'), reference.modelText.slice(0, 300));
    await expect(server.loadModel('corrupt')).rejects.toThrow(/end of trees/);
    await model('wrong_width', reference, 3);
    await expect(server.loadModel('wrong_width')).rejects.toThrow(/output__0.*last dimension 3.*1/);
    await model('wrong_type', reference, 1, { model_type: 'catboost' });
    await expect(server.loadModel('wrong_type')).rejects.toThrow(/model_type/);
  });

  it('splits a large batch among worker threads (cpu_nthread), with the results of one thread; models share the threads, which end with the last one unloaded', async () => {
    const reference = byName('multiclass');
    const forest = readLightGbm(reference.modelText, 'model.txt');
    const { x, rows } = repeated(reference, Math.floor(1024 / reference.rows));
    // Large enough to be split (PARALLEL_WALKS).
    expect(rows * forest.roots.length).toBeGreaterThanOrEqual(20_000);
    // The threads this test starts, by id: another thread of the process may come or go meanwhile.
    const before = new Set(readdirSync('/proc/self/task'));
    const started = () => readdirSync('/proc/self/task').filter((tid) => !before.has(tid));
    await model('threaded', reference, forest.numGroups, { cpu_nthread: '2', predict_proba: 'true' });
    await server.loadModel('threaded');
    const [output, small] = await Promise.all([infer('threaded', x, rows), infer('threaded', reference.x, reference.rows)]);
    // cpu_nthread is capped at the core count; with one core a batch runs on the event loop.
    const cores = availableParallelism();
    const workers = Math.min(2, cores);
    const firstThreads = started();
    expect(firstThreads).toHaveLength(workers > 1 ? workers : 0);
    expect(output.data).toEqual(Float32Array.from(predict(forest, x, rows)));
    expect(small.data).toEqual(Float32Array.from(predict(forest, reference.x, reference.rows)));
    // Two more models, each asking for every core (the default), run their large batches at the same time: the threads are the backend's, one per core at most.
    for (const name of ['threaded_too', 'threaded_three']) {
      await model(name, reference, forest.numGroups, { predict_proba: 'true' });
      await server.loadModel(name);
    }
    const outputs = await Promise.all(['threaded', 'threaded_too', 'threaded_three'].map((name) => infer(name, x, rows)));
    for (const each of outputs) expect(each.data).toEqual(output.data);
    const poolThreads = started();
    expect(poolThreads).toHaveLength(cores > 1 ? cores : 0);
    expect(poolThreads).toEqual(expect.arrayContaining(firstThreads));
    await server.unloadModel('threaded');
    await server.unloadModel('threaded_too');
    expect(started()).toEqual(expect.arrayContaining(poolThreads));
    await server.unloadModel('threaded_three');
    const alive = new Set(readdirSync('/proc/self/task'));
    expect(poolThreads.filter((tid) => alive.has(tid))).toEqual([]);
  });

  it('unloads and reloads a model without growing memory', async () => {
    const reference = byName('regression');
    await model('cycled', reference, 1);
    const cycle = async () => {
      await server.loadModel('cycled');
      await infer('cycled', reference.x, reference.rows);
      await server.unloadModel('cycled');
    };
    for (let i = 0; i < 5; i++) await cycle();
    global.gc?.();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 50; i++) await cycle();
    global.gc?.();
    expect(process.memoryUsage().heapUsed - before).toBeLessThan(20 * 1024 * 1024);
  });
});
