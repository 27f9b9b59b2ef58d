import { describe, expect, it, vi } from 'vitest';
import { testConfig } from '../helpers/repository.js';
import { useServerFixture } from '../helpers/server-fixture.js';

const fx = useServerFixture();

describe('modelFacts', () => {
  it("answers a version's facts from its config, the same frozen object every time, with no config copy", async () => {
    const server = await fx.start({ m: { config: testConfig({ maxBatchSize: 8 }) } });
    const configs = vi.spyOn(server, 'modelConfig');
    const facts = server.modelFacts('m');
    expect(facts).toEqual({
      name: 'm',
      version: 1,
      decoupled: false,
      maxBatchSize: 8,
      platform: '',
      backend: 'test',
      inputs: [expect.objectContaining({ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [4] })],
      outputs: [expect.objectContaining({ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [4] })],
    });
    expect(server.modelFacts('m')).toBe(facts);
    expect(server.modelFacts('m', 1)).toBe(facts);
    expect(configs).not.toHaveBeenCalled();
    expect(Object.isFrozen(facts) && Object.isFrozen(facts.inputs) && Object.isFrozen(facts.inputs[0]) && Object.isFrozen(facts.inputs[0]!.dims)).toBe(true);
    expect(() => (facts.inputs[0]!.dims as number[]).push(1)).toThrow(TypeError);
    // The facts are copies: the config the model runs with is not frozen with them.
    expect((await server.modelConfig('m')).input[0]!.dims).toEqual([4]);
  });

  it('serves new facts once a reload changes the config', async () => {
    const server = await fx.start({ m: { config: testConfig({ maxBatchSize: 8 }) } }, { modelControlMode: 'explicit', startupModels: ['m'] });
    expect(server.modelFacts('m', 1).maxBatchSize).toBe(8);
    await server.loadModel('m', { config: testConfig({ behavior: 'repeat', extra: 'model_transaction_policy { decoupled: true }' }) });
    expect(server.modelFacts('m', 1)).toMatchObject({ maxBatchSize: 0, decoupled: true });
  });

  it('throws as modelConfig() rejects for a model or version the server does not serve', async () => {
    const server = await fx.start({ m: { config: testConfig({}) } });
    for (const [name, version] of [['ghost', undefined], ['m', 2]] as const) {
      const refusal = await server.modelConfig(name, version).catch((error: unknown) => error);
      expect(refusal).toMatchObject({ code: 'NOT_FOUND' });
      expect(() => server.modelFacts(name, version)).toThrow(refusal as Error);
    }
  });
});
