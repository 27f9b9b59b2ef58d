import { mkdtemp, cp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';
import { InferenceServer } from '@tritium/core';
import { MODELS } from './helpers.js';

// A machine where the addon could not be built: the package still imports, and a Python model says what to install.
vi.mock('../src/native.js', () => ({
  loadSharedMemoryAddon: () => {
    throw new Error('the shared-memory addon of @tritium/backend-python is not built (build/Release/shared_memory.node does not exist): install cmake and a C++ compiler, then run `pnpm --filter @tritium/backend-python build:native`');
  },
}));

it('without the addon the package imports, and a Python model is UNAVAILABLE saying what to install', async () => {
  const { pythonBackend } = await import('@tritium/backend-python');
  const repo = await mkdtemp(join(tmpdir(), 'tritium-no-addon-'));
  await cp(join(MODELS, 'add_sub'), join(repo, 'add_sub'), { recursive: true });
  const server = await InferenceServer.start({ modelRepository: repo, backends: [pythonBackend()] });
  try {
    const [entry] = await server.repositoryIndex();
    expect(entry).toMatchObject({ name: 'add_sub', state: 'UNAVAILABLE' });
    expect(entry!.reason).toMatch(/model 'add_sub': the shared-memory addon of @tritium\/backend-python is not built .*install cmake and a C\+\+ compiler/);
  } finally {
    await server.stop();
    await rm(repo, { recursive: true, force: true });
  }
});
