import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InferenceServer } from '@tritium/core';
import { TempRepository, testConfig } from '../helpers/repository.js';
import { useServerFixture } from '../helpers/server-fixture.js';
import { newProbe, testBackend } from '../helpers/test-backend.js';

const fx = useServerFixture();

const warmup = (body: string) => `model_warmup [ { ${body} } ]`;
const input = (name: string, data: string, dims = '4', type = 'TYPE_FP32') =>
  `inputs { key: "${name}" value { data_type: ${type} dims: [ ${dims} ] ${data} } }`;

/** A server over one model `m` with `config`, after writing `files` under the model's directory. */
async function start(config: string, files: Record<string, Uint8Array | string> = {}) {
  const probe = newProbe();
  fx.repo = await TempRepository.create({ m: { config } });
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(fx.repo.path, 'm', path, '..'), { recursive: true });
    await writeFile(join(fx.repo.path, 'm', path), content);
  }
  fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, backends: [testBackend(probe)] });
  const [entry] = await fx.server.repositoryIndex();
  return { probe, entry: entry! };
}

describe('model warmup', () => {
  it('runs each sample count times as batch_size requests of batch 1 on every instance, before the model is READY', async () => {
    const { probe, entry } = await start(
      testConfig({ maxBatchSize: 8, count: 2, extra: warmup(`name: "zeros" batch_size: 3 count: 2 ${input('INPUT0', 'zero_data: true')}`) }),
    );
    expect(entry.state).toBe('READY');
    expect(probe.batches).toHaveLength(4); // 2 instances × count 2
    expect(new Set(probe.ranOn)).toEqual(new Set(['m_0_0', 'm_0_1']));
    for (const batch of probe.batches) {
      expect(batch).toHaveLength(3);
      for (const request of batch) {
        expect(request.inputs.INPUT0!.shape).toEqual([1, 4]);
        expect(Array.from(request.inputs.INPUT0!.data as Float32Array)).toEqual([0, 0, 0, 0]);
      }
    }
    // Warmup is not traffic: nothing shows in the statistics.
    expect(fx.server!.statistics('m').model_stats[0]!.execution_count).toBe(0);
  });

  it('skips a sample of batch size 0, and runs a sample of count 0 once', async () => {
    const { probe } = await start(
      testConfig({
        extra: `model_warmup [ { name: "skipped" batch_size: 0 ${input('INPUT0', 'zero_data: true')} },
                               { name: "once" batch_size: 1 ${input('INPUT0', 'random_data: true')} } ]`,
      }),
    );
    expect(probe.batches).toHaveLength(1);
    expect(probe.batches[0]![0]!.inputs.INPUT0!.shape).toEqual([4]);
  });

  it('reads input_data_file from <model>/warmup/, and refuses a file too short, naming it', async () => {
    const values = new Float32Array([1.5, 2.5, 3.5, 4.5]);
    const { probe } = await start(testConfig({ extra: warmup(`name: "file" batch_size: 1 ${input('INPUT0', 'input_data_file: "four.bin"')}`) }), {
      'warmup/four.bin': new Uint8Array(values.buffer),
    });
    expect(Array.from(probe.batches[0]![0]!.inputs.INPUT0!.data as Float32Array)).toEqual([1.5, 2.5, 3.5, 4.5]);
    await fx.server!.stop();
    const { entry } = await start(testConfig({ extra: warmup(`name: "short" batch_size: 1 ${input('INPUT0', 'input_data_file: "short.bin"')}`) }), {
      'warmup/short.bin': new Uint8Array(8),
    });
    expect(entry.state).toBe('UNAVAILABLE');
    expect(entry.reason).toMatch(/warmup sample 'short' input 'INPUT0': expects 16 bytes, but .*short\.bin has only 8/);
  });

  it('refuses a sample with a variable dimension', async () => {
    const { entry } = await start(testConfig({ dims: [-1], extra: warmup(`name: "var" batch_size: 1 ${input('INPUT0', 'zero_data: true', '-1')}`) }));
    expect(entry.state).toBe('UNAVAILABLE');
    expect(entry.reason).toMatch(/warmup sample 'var' input 'INPUT0': all dimensions must be given, got \[-1\]/);
  });

  it('leaves the model UNAVAILABLE with the reason when a warmup request fails, and finalizes what it made', async () => {
    const { probe, entry } = await start(testConfig({ behavior: 'add', inputs: 2, extra: warmup(`name: "half" batch_size: 1 ${input('INPUT0', 'zero_data: true')}`) }));
    expect(entry.state).toBe('UNAVAILABLE');
    expect(entry.reason).toMatch(/instance m_0_0: warmup sample 'half' \(iteration 1\)/);
    expect(probe.instancesFinalized).toEqual(['m_0_0']);
  });

  it('fails, instead of waiting forever, when the backend answers fewer requests than it was given', async () => {
    const short = { ...testBackend(), name: 'short', createModel: async () => ({ createInstance: async () => ({ execute: async () => [{}] }) }) };
    fx.repo = await TempRepository.create({ m: { config: testConfig({ extra: warmup(`name: "two" batch_size: 2 ${input('INPUT0', 'zero_data: true')}`) }).replace('backend: "test"', 'backend: "short"') } });
    fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, backends: [short] });
    const [entry] = await fx.server.repositoryIndex();
    expect(entry!.state).toBe('UNAVAILABLE');
    expect(entry!.reason).toMatch(/warmup sample 'two' \(iteration 1\): the backend returned 1 responses for 2 requests/);
  });

  it('waits for a decoupled model’s final response', async () => {
    const { probe, entry } = await start(
      testConfig({ behavior: 'repeat', extra: `model_transaction_policy { decoupled: true }\n${warmup(`name: "stream" batch_size: 1 ${input('INPUT0', 'zero_data: true')}`)}` }),
    );
    expect(entry.state).toBe('READY');
    expect(probe.batches).toHaveLength(1);
  });
});
