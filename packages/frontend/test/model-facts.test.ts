import { describe, expect, it, vi } from 'vitest';
import { useServerFixture } from '../../core/test/helpers/server-fixture.js';
import { testConfig } from '../../core/test/helpers/repository.js';
import { modelFacts } from '../src/model-facts.js';

const fx = useServerFixture();

const labelled = (maxBatchSize: number) =>
  testConfig({ maxBatchSize }).replace(
    'output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] }',
    'output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] label_filename: "labels.txt" }',
  );

describe('modelFacts', () => {
  it("reads a model's configuration once for every lookup, and answers known facts without waiting", async () => {
    const server = await fx.start({ m: { config: labelled(8) } });
    const facts = modelFacts(server);
    expect(modelFacts(server)).toBe(facts);
    const configs = vi.spyOn(server, 'modelConfig');
    expect(facts.known('m')).toBeUndefined();
    const first = await facts.of('m');
    expect(first).toEqual({ decoupled: false, maxBatchSize: 8, inputs: [expect.objectContaining({ name: 'INPUT0', data_type: 'TYPE_FP32' })] });
    expect(await facts.of('m')).toBe(first);
    expect(facts.known('m')).toBe(first);
    expect(await facts.of('m', 1)).toEqual(first);
    expect(configs).toHaveBeenCalledTimes(2);
  });

  it('forgets what it knows of a model when the model changes state, so a reload is seen', async () => {
    const server = await fx.start({ m: { config: labelled(8) } }, { modelControlMode: 'explicit', startupModels: ['m'] });
    const facts = modelFacts(server);
    expect((await facts.of('m', 1)).maxBatchSize).toBe(8);
    await server.loadModel('m', { config: labelled(0) });
    expect(facts.known('m', 1)).toBeUndefined();
    expect((await facts.of('m', 1)).maxBatchSize).toBe(0);
  });

  it('says a model the server does not serve is not decoupled (the request then fails there), and rejects its facts', async () => {
    const server = await fx.start({ m: { config: testConfig({}) } });
    const facts = modelFacts(server);
    expect(await facts.isDecoupled('ghost')).toBe(false);
    await expect(facts.of('ghost')).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(facts.known('ghost')).toBeUndefined();
  });
});
