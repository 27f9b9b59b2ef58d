import { randomUUID } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { useServerFixture } from '../../core/test/helpers/server-fixture.js';
import { testConfig } from '../../core/test/helpers/repository.js';
import { deliverOutputs, outputRequest, plainOutputs } from '../src/requested-outputs.js';
import { SystemSharedMemory } from '../src/shared-memory/system-shared-memory.js';

const fx = useServerFixture();
const memory = new SystemSharedMemory();
const regions = memory.forRequest(1024);
const key = `/tritium-test-${randomUUID()}`;

afterEach(() => {
  regions.release();
  memory.unregister();
  rmSync(`/dev/shm${key}`, { force: true });
});

const batched = testConfig({ inputs: 2, maxBatchSize: 4, dims: [3] }).replace(
  'output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 3 ] }',
  'output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 3 ] label_filename: "labels.txt" }',
);
const inputs = {
  INPUT0: { datatype: 'FP32' as const, shape: [1, 3], data: Float32Array.from([0.2, 0.5, 0.3]) },
  INPUT1: { datatype: 'FP32' as const, shape: [1, 3], data: Float32Array.from([1, 2, 3]) },
};

describe('outputRequest and deliverOutputs', () => {
  it('classifies with the labels of the served model, writes shared-memory outputs, and keeps the order asked for', async () => {
    const server = await fx.start({ m: { config: batched } });
    await writeFile(join(fx.repo!.path, 'm', 'labels.txt'), 'low\nmid\nhigh\n');
    writeFileSync(`/dev/shm${key}`, new Uint8Array(32));
    memory.register('out', key, 0, 32);
    const requested = [outputRequest('OUTPUT1', { shared_memory_region: 'out', shared_memory_byte_size: 16, shared_memory_offset: 4 }, regions), outputRequest('OUTPUT0', { classification: 2 }, regions)];
    const response = await server.infer('m', { inputs, outputs: requested.map((r) => r.name) });
    const delivered = await deliverOutputs(server, response, requested, regions);
    expect(delivered.map((d) => d.name)).toEqual(['OUTPUT1', 'OUTPUT0']);
    expect(delivered[0]!.sharedMemory).toEqual({ region: 'out', offset: 4, byteSize: 12 });
    expect(Array.from(new Float32Array(regions.read({ region: 'out', offset: 4, byteSize: 12 }).slice().buffer))).toEqual([1, 2, 3]);
    expect(delivered[1]!.tensor).toEqual({ datatype: 'BYTES', shape: [1, 2], data: ['0.500000:1:mid', '0.300000:2:high'] });
  });

  it("hands the model's outputs through as they are when nothing special is asked, without waiting", async () => {
    const server = await fx.start({ m: { config: batched } });
    const response = await server.infer('m', { inputs });
    const asked = [outputRequest('OUTPUT0', { binary_data: true }, regions)];
    const delivered = await deliverOutputs(server, response, asked, regions);
    expect(delivered.map((d) => [d.name, d.tensor])).toEqual(Object.entries(response.outputs));
    expect(plainOutputs(response, asked)).toEqual(delivered);
    expect(plainOutputs(response, [outputRequest('OUTPUT0', { classification: 1 }, regions)])).toBeUndefined();
  });

  it("reads a model's batching from its facts and its labels once, copying no config per classified response", async () => {
    const server = await fx.start({ m: { config: batched } });
    await writeFile(join(fx.repo!.path, 'm', 'labels.txt'), 'low\nmid\nhigh\n');
    const configs = vi.spyOn(server, 'modelConfig');
    const requested = [outputRequest('OUTPUT0', { classification: 1 }, regions)];
    for (let i = 0; i < 5; i++) {
      const delivered = await deliverOutputs(server, await server.infer('m', { inputs }), requested, regions);
      expect(delivered[0]!.tensor.data).toEqual(['0.500000:1:mid']);
      // The loaded model's labels stay those read first.
      await writeFile(join(fx.repo!.path, 'm', 'labels.txt'), 'changed\n');
    }
    expect(configs).not.toHaveBeenCalled();
  });

  it.each([
    [{ classification: 0 }, /output 'O': parameter 'classification' must be a positive integer, got number 0/],
    [{ classification: [[1]] }, /output 'O': parameter 'classification' must be a positive integer, got an array/],
    [{ shared_memory_region: 'r' }, /output 'O': 'shared_memory_byte_size' is required/],
    [{ shared_memory_region: 'r', shared_memory_byte_size: -1 }, /parameter 'shared_memory_byte_size' must be a non-negative integer, got number -1/],
    [{ shared_memory_region: 'r', shared_memory_byte_size: 4, classification: 1 }, /classification cannot be written to shared memory/],
  ])('refuses output parameters %j', (parameters, message) => {
    expect(() => outputRequest('O', parameters, regions)).toThrow(message);
  });
});
