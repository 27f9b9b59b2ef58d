import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readEngineSettings } from '../src/engine-settings.js';

describe('readEngineSettings', () => {
  let dir: string;
  beforeAll(async () => void (dir = await mkdtemp(join(tmpdir(), 'tritium-llamacpp-settings-'))));
  afterAll(async () => rm(dir, { recursive: true, force: true }));

  const read = async (json: unknown) => {
    await writeFile(join(dir, 'model.json'), typeof json === 'string' ? json : JSON.stringify(json));
    return readEngineSettings('m', join(dir, 'model.json'), dir);
  };

  it('resolves the GGUF file in the version directory and fills the defaults', async () => {
    expect(await read({ model: 'weights.gguf' })).toEqual({ modelPath: join(dir, 'weights.gguf'), contextSize: 2048, parallel: 8, threads: 0, batchSize: 512 });
    expect(await read({ model: 'w.gguf', context_size: 256, parallel: 2, threads: 3, batch_size: 64 })).toMatchObject({ contextSize: 256, parallel: 2, threads: 3, batchSize: 64 });
  });

  it.each([
    [{}, "'model' must name the GGUF file"],
    [{ model: '../outside.gguf' }, 'must name a file inside'],
    [{ model: 'w.gguf', parallel: 0 }, "'parallel' must be an integer >= 1"],
    [{ model: 'w.gguf', context_size: 'big' }, "'context_size' must be an integer"],
    [{ model: 'w.gguf', gpu_layers: 10 }, "unknown field 'gpu_layers'"],
    ['{not json', 'is not JSON'],
    [[1], 'must hold a JSON object'],
  ])('refuses %j', async (json, message) => {
    await expect(read(json)).rejects.toThrow(message);
  });

  it('says the file is missing as UNAVAILABLE', async () => {
    await expect(readEngineSettings('m', join(dir, 'absent.json'), dir)).rejects.toMatchObject({ code: 'UNAVAILABLE', message: expect.stringContaining('cannot be read') });
  });
});
