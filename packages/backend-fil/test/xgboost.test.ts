import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferenceServer } from '@tritium/core';
import { filBackend } from '@tritium/backend-fil';
import { TempRepository } from '../../core/test/helpers/repository.js';
import { predict } from '../src/forest.js';
import { readXgboostBinary } from '../src/xgboost-binary.js';
import { readXgboostJson, readXgboostUbj } from '../src/xgboost-json.js';
import { filConfig, maxRelativeError, referenceCases } from './helpers.js';

// xgboost is not installable here: the references are random forests in its JSON,
// UBJSON and legacy binary formats, predicted by an independent recursive evaluator in Python.
const references = await referenceCases('xgboost_models.py', ['xgboost.json', 'xgboost.model', 'xgboost.ubj'], 'python3 with numpy');
if ('missing' in references) console.log(`skipping XGBoost JSON reference tests: ${references.missing}`);
const cases = 'cases' in references ? references.cases : [];

/** A two-node-deep tree worked out by hand: f0 < 0.5 ? (f1 < -1 ? 1 : 2) : 3, NaN left at the root, right below. */
const handTree = {
  learner: {
    gradient_booster: {
      name: 'gbtree',
      model: {
        tree_info: [0],
        trees: [{
          left_children: [1, 3, -1, -1, -1], right_children: [2, 4, -1, -1, -1],
          split_indices: [0, 1, 0, 0, 0], split_conditions: [0.5, -1, 3, 1, 2], default_left: [1, 0, 0, 0, 0],
        }],
      },
    },
    learner_model_param: { base_score: '1E1', num_class: '0', num_feature: '2' },
    objective: { name: 'reg:squarederror' },
  },
};

describe('XGBoost JSON reader', () => {
  it('routes rows as XGBoost defines: left when x < threshold, NaN by default_left', () => {
    const forest = readXgboostJson(JSON.stringify(handTree), 'hand.json', false);
    const x = new Float32Array([0.4, -2, 0.5, 0, NaN, 5, NaN, NaN, 0.4, -1]);
    expect(Array.from(predict(forest, x, 5))).toEqual([11, 13, 12, 12, 12]);
  });

  it('refuses unknown fields unless allowed, categorical splits, and what is not JSON', () => {
    const extra = structuredClone(handTree) as { learner: Record<string, unknown> };
    extra.learner.surprise = 1;
    expect(() => readXgboostJson(JSON.stringify(extra), 'x.json', false)).toThrow(/unknown field.*surprise.*xgboost_allow_unknown_field/);
    expect(readXgboostJson(JSON.stringify(extra), 'x.json', true).roots.length).toBe(1);
    const categorical = structuredClone(handTree);
    Object.assign(categorical.learner.gradient_booster.model.trees[0]!, { split_type: [1, 0, 0, 0, 0] });
    expect(() => readXgboostJson(JSON.stringify(categorical), 'x.json', false)).toThrow(expect.objectContaining({ code: 'UNSUPPORTED' }));
    expect(() => readXgboostJson('\u0000binf', 'x.json', false)).toThrow(/not JSON/);
    // Node 2 pointing back at node 1 would loop forever at evaluation.
    const cyclic = structuredClone(handTree);
    Object.assign(cyclic.learner.gradient_booster.model.trees[0]!, { left_children: [1, 3, 1, -1, -1], right_children: [2, 4, 3, -1, -1] });
    expect(() => readXgboostJson(JSON.stringify(cyclic), 'x.json', false)).toThrow(/do not form trees/);
  });

  it('refuses a tree without nodes, a lost tree, and UBJSON nested past reason', () => {
    const empty = structuredClone(handTree);
    Object.assign(empty.learner.gradient_booster.model.trees[0]!, { left_children: [], right_children: [], split_indices: [], split_conditions: [], default_left: [] });
    expect(() => readXgboostJson(JSON.stringify(empty), 'x.json', false)).toThrow(/tree 0 has no nodes/);
    const lost = structuredClone(handTree) as { learner: { gradient_booster: { model: Record<string, unknown> } } };
    lost.learner.gradient_booster.model.gbtree_model_param = { num_trees: '2', num_parallel_tree: '1' };
    expect(() => readXgboostJson(JSON.stringify(lost), 'x.json', false)).toThrow(/num_trees is 2, but it has 1 trees/);
    expect(() => readXgboostUbj(new TextEncoder().encode('['.repeat(100_000)), 'x.ubj', false)).toThrow(/nest more than 64 deep/);
  });

  it('refuses values outside their range: default_left, base_score, dart weights', () => {
    const defaultLeft = structuredClone(handTree);
    defaultLeft.learner.gradient_booster.model.trees[0]!.default_left = [3, 0, 0, 0, 0];
    expect(() => readXgboostJson(JSON.stringify(defaultLeft), 'x.json', false)).toThrow(/tree 0 has default_left 3, not 0 or 1/);
    const logistic = structuredClone(handTree);
    logistic.learner.objective.name = 'binary:logistic';
    logistic.learner.learner_model_param.base_score = '1';
    expect(() => readXgboostJson(JSON.stringify(logistic), 'x.json', false)).toThrow(/base_score 1 is outside the range of objective 'binary:logistic'/);
    const dart = structuredClone(handTree) as { learner: { gradient_booster: Record<string, unknown> } };
    dart.learner.gradient_booster = { name: 'dart', gbtree: { name: 'gbtree', model: handTree.learner.gradient_booster.model }, weight_drop: [] };
    expect(() => readXgboostJson(JSON.stringify(dart), 'x.json', false)).toThrow(/weight_drop has 0 entries for 1 trees/);
  });

  it.each(cases.map((c) => [c.name, c] as const))('%s matches the independent evaluation', (_name, reference) => {
    const forest = readXgboostJson(reference.modelText, 'xgboost.json', false);
    const predictions = predict(forest, reference.x, reference.rows);
    expect(predictions.length).toBe(reference.expected.length);
    expect(maxRelativeError(predictions, reference.expected)).toBeLessThan(1e-9);
  });
});

describe('XGBoost UBJSON reader', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s matches the independent evaluation', (_name, reference) => {
    const predictions = predict(readXgboostUbj(reference.files['xgboost.ubj']!, 'xgboost.ubj', false), reference.x, reference.rows);
    expect(maxRelativeError(predictions, reference.expected)).toBeLessThan(1e-9);
  });

  it.skipIf(cases.length === 0)('refuses a truncated file or JSON text with a reason', () => {
    const bytes = cases[0]!.files['xgboost.ubj']!;
    expect(() => readXgboostUbj(bytes.subarray(0, bytes.length - 1), 'xgboost.ubj', false)).toThrow(/not closed/);
    expect(() => readXgboostUbj(bytes.subarray(0, 200), 'xgboost.ubj', false)).toThrow(/truncated/);
    expect(() => readXgboostUbj(cases[0]!.files['xgboost.json']!, 'xgboost.ubj', false)).toThrow(/UBJSON/);
  });
});

describe('XGBoost legacy binary reader', () => {
  // base_score is float32 in this format, so a logistic margin differs in the 8th digit.
  it.each(cases.map((c) => [c.name, c] as const))('%s matches the independent evaluation', (_name, reference) => {
    const predictions = predict(readXgboostBinary(reference.files['xgboost.model']!, 'xgboost.model'), reference.x, reference.rows);
    expect(maxRelativeError(predictions, reference.expected)).toBeLessThan(1e-6);
  });

  it.skipIf(cases.length === 0)('refuses a truncated file or JSON with a reason', () => {
    const bytes = cases[0]!.files['xgboost.model']!;
    expect(() => readXgboostBinary(bytes.subarray(0, bytes.length - 10), 'xgboost.model')).toThrow(/ends inside tree_info/);
    expect(() => readXgboostBinary(bytes.subarray(0, 100), 'xgboost.model')).toThrow(/ends inside the learner parameters/);
    expect(() => readXgboostBinary(cases[0]!.files['xgboost.json']!, 'xgboost.model')).toThrow(/xgboost_json/);
    expect(() => readXgboostBinary(cases[0]!.files['xgboost.ubj']!, 'xgboost.model')).toThrow(/xgboost_ubj/);
  });
});

describe.skipIf(cases.length === 0)('a Triton repository of XGBoost models', () => {
  let repository: TempRepository;
  let server: InferenceServer;

  beforeAll(async () => {
    repository = await TempRepository.create();
    const reference = cases.find((c) => c.name === 'multiclass')!;
    await mkdir(join(repository.path, 'xgb', '1'), { recursive: true });
    await writeFile(join(repository.path, 'xgb', 'config.pbtxt'), filConfig({ name: 'xgb', modelType: 'xgboost_json', features: reference.features, outputWidth: 4, parameters: { is_classifier: 'true', predict_proba: 'true' } }));
    await writeFile(join(repository.path, 'xgb', '1', 'xgboost.json'), reference.modelText);
    await mkdir(join(repository.path, 'xgb_ubj', '1'), { recursive: true });
    await writeFile(join(repository.path, 'xgb_ubj', 'config.pbtxt'), filConfig({ name: 'xgb_ubj', modelType: 'xgboost_ubj', features: reference.features, outputWidth: 1, parameters: { is_classifier: 'true' } }));
    await writeFile(join(repository.path, 'xgb_ubj', '1', 'xgboost.ubj'), reference.files['xgboost.ubj']!);
    await mkdir(join(repository.path, 'legacy', '1'), { recursive: true });
    await writeFile(join(repository.path, 'legacy', 'config.pbtxt'), filConfig({ name: 'legacy', modelType: 'treelite_checkpoint', features: 6, outputWidth: 1 }));
    await writeFile(join(repository.path, 'legacy', '1', 'checkpoint.tl'), 'TL');
    // No model_type: Triton's default, the legacy binary xgboost.model.
    const binary = cases.find((c) => c.name === 'binary')!;
    await mkdir(join(repository.path, 'default_type', '1'), { recursive: true });
    await writeFile(join(repository.path, 'default_type', 'config.pbtxt'), filConfig({ name: 'default_type', features: binary.features, outputWidth: 1, parameters: { is_classifier: 'true' } }));
    await writeFile(join(repository.path, 'default_type', '1', 'xgboost.model'), binary.files['xgboost.model']!);
    // multi:softmax predicts the class itself, with or without is_classifier.
    await mkdir(join(repository.path, 'softmax', '1'), { recursive: true });
    await writeFile(join(repository.path, 'softmax', 'config.pbtxt'), filConfig({ name: 'softmax', modelType: 'xgboost_json', features: reference.features, outputWidth: 1 }));
    await writeFile(join(repository.path, 'softmax', '1', 'xgboost.json'), reference.modelText.replace('"multi:softprob"', '"multi:softmax"'));
    server = await InferenceServer.start({ modelRepository: repository.path, modelControlMode: 'explicit', startupModels: ['xgb', 'xgb_ubj', 'default_type', 'softmax'], backends: [filBackend()] });
  });
  afterAll(async () => {
    await server?.stop();
    await repository?.remove();
  });

  it('serves the class probabilities (JSON) and classes (UBJSON)', async () => {
    const reference = cases.find((c) => c.name === 'multiclass')!;
    const response = await server.infer('xgb', { inputs: { input__0: { datatype: 'FP32', shape: [reference.rows, reference.features], data: reference.x } } });
    expect(response.outputs.output__0!.shape).toEqual([reference.rows, 4]);
    expect(maxRelativeError(response.outputs.output__0!.data as Float32Array, reference.expected)).toBeLessThan(1e-6);
    const classes = await server.infer('xgb_ubj', { inputs: { input__0: { datatype: 'FP32', shape: [reference.rows, reference.features], data: reference.x } } });
    const argmax = (r: number) => {
      const row = Array.from(reference.expected.subarray(r * 4, r * 4 + 4));
      return row.indexOf(Math.max(...row));
    };
    expect(Array.from(classes.outputs.output__0!.data as Float32Array)).toEqual(Array.from({ length: reference.rows }, (_, r) => argmax(r)));
    const softmax = await server.infer('softmax', { inputs: { input__0: { datatype: 'FP32', shape: [reference.rows, reference.features], data: reference.x } } });
    expect(softmax.outputs.output__0!.shape).toEqual([reference.rows, 1]);
    expect(Array.from(softmax.outputs.output__0!.data as Float32Array)).toEqual(Array.from({ length: reference.rows }, (_, r) => argmax(r)));
  });

  it('reports its tree walks as compute_infer, apart from reading the rows and shaping the outputs', async () => {
    const reference = cases.find((c) => c.name === 'multiclass')!;
    const before = server.statistics('xgb').model_stats[0]!.inference_stats;
    await server.infer('xgb', { inputs: { input__0: { datatype: 'FP32', shape: [reference.rows, reference.features], data: reference.x } } });
    const after = server.statistics('xgb').model_stats[0]!.inference_stats;
    expect(after.compute_infer.ns).toBeGreaterThan(before.compute_infer.ns);
    // The softmax and the output tensor come after the walks: compute_output, which a backend that reports nothing leaves at 0.
    expect(after.compute_output.ns).toBeGreaterThan(before.compute_output.ns);
  });

  it('reads the legacy binary when the config names no model_type', async () => {
    const binary = cases.find((c) => c.name === 'binary')!;
    const response = await server.infer('default_type', { inputs: { input__0: { datatype: 'FP32', shape: [binary.rows, binary.features], data: binary.x } } });
    expect(Array.from(response.outputs.output__0!.data as Float32Array)).toEqual(Array.from(binary.expected, (p) => (p > 0.5 ? 1 : 0)));
  });

  it('names the conversion for a format it does not read', async () => {
    // Triton's code and words for a version that fails to load; the backend's reason follows.
    await expect(server.loadModel('legacy')).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: expect.stringMatching(/^load failed for model 'legacy': version 1 is at UNAVAILABLE state: .*treelite_checkpoint.*XGBoost JSON or a LightGBM model.txt/),
    });
  });
});
