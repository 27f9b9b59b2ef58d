import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';
import { InferenceServer } from '@tritium/core';
import { llamacppBackend } from '@tritium/backend-llamacpp';

// A machine where node-llama-cpp finds no prebuilt binary for its platform (its platform package not installed).
vi.mock('node-llama-cpp', async (importOriginal) => ({
  ...(await importOriginal<typeof import('node-llama-cpp')>()),
  getLlama: async () => {
    throw new Error('NoBinaryFoundError: no prebuilt binary was found');
  },
}));

it('without a llama.cpp binary, a model is UNAVAILABLE saying what to install, and nothing is downloaded', async () => {
  const repo = await mkdtemp(join(tmpdir(), 'tritium-llamacpp-nobinary-'));
  try {
    await mkdir(join(repo, 'm', '1'), { recursive: true });
    await writeFile(join(repo, 'm', 'config.pbtxt'), 'backend: "llamacpp"\n');
    await writeFile(join(repo, 'm', '1', 'model.json'), JSON.stringify({ model: 'model.gguf' }));
    const server = await InferenceServer.start({ modelRepository: repo, backends: [llamacppBackend()], continueOnLoadError: true });
    try {
      const [entry] = await server.repositoryIndex();
      expect(entry).toMatchObject({ name: 'm', state: 'UNAVAILABLE' });
      expect(entry!.reason).toContain('no usable llama.cpp binary (NoBinaryFoundError: no prebuilt binary was found)');
      expect(entry!.reason).toContain('@node-llama-cpp/linux-x64');
    } finally {
      await server.stop();
    }
  } finally {
    await rm(repo, { recursive: true, force: true });
  }
});
