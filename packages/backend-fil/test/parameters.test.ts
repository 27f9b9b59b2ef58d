import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { ModelConfig } from '@tritium/core';
import { captureWarnings } from '../../core/test/helpers/warnings.js';
import { readParameters } from '../src/parameters.js';

const configWith = (parameters: Record<string, string>): ModelConfig => ({
  name: 'forest',
  parameters: Object.fromEntries(Object.entries(parameters).map(([key, value]) => [key, { string_value: value }])),
});

function read(parameters: Record<string, string>) {
  const warnings = captureWarnings();
  return { parameters: readParameters(configWith(parameters)), warnings };
}

describe('FIL parameters', () => {
  it("defaults as Triton's FIL: legacy XGBoost binary, regressor, threshold 0.5", () => {
    expect(read({}).parameters).toEqual({ modelType: 'xgboost', isClassifier: false, predictProba: false, threshold: 0.5, allowUnknownField: false, threads: availableParallelism() });
  });

  it('reads is_classifier, and output_class with a deprecation warning', () => {
    expect(read({ is_classifier: 'true' })).toMatchObject({ parameters: { isClassifier: true }, warnings: [] });
    const old = read({ output_class: 'true', predict_proba: 'true', threshold: '0.25' });
    expect(old.parameters).toMatchObject({ isClassifier: true, predictProba: true, threshold: 0.25 });
    expect(old.warnings).toEqual([{ code: 'TRITIUM_W013', message: expect.stringMatching(/output_class.*deprecated.*is_classifier/) }]);
    expect(read({ is_classifier: 'false', output_class: 'true' }).parameters.isClassifier).toBe(false);
  });

  it('accepts the GPU and layout tuning parameters with a warning each', () => {
    const { warnings } = read({ algo: 'ALGO_AUTO', storage_type: 'AUTO', threads_per_tree: '4', blocks_per_sm: '0', layout: 'depth_first', chunk_size: '4', use_experimental_optimizations: 'true' });
    expect(warnings.map(({ code }) => code)).toEqual(Array(7).fill('TRITIUM_W014'));
    expect(warnings[0]!.message).toMatch(/'algo' is accepted but has no effect/);
  });

  it('reads cpu_nthread as the thread count for large batches, at most the core count, all cores when not given or below 1', () => {
    expect(read({ cpu_nthread: '1' })).toMatchObject({ parameters: { threads: 1 }, warnings: [] });
    expect(read({ cpu_nthread: '1000' }).parameters.threads).toBe(availableParallelism());
    expect(read({ cpu_nthread: '-1' }).parameters.threads).toBe(availableParallelism());
    expect(() => read({ cpu_nthread: 'all' })).toThrow(/cpu_nthread.*all.*an integer/);
  });

  it('refuses values it cannot read, naming the parameter', () => {
    expect(() => read({ model_type: 'catboost' })).toThrow(/model_type.*catboost.*lightgbm/);
    expect(() => read({ predict_proba: 'yes' })).toThrow(/predict_proba.*yes/);
    expect(() => read({ threshold: 'high' })).toThrow(/threshold.*high/);
  });
});
