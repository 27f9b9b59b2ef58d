import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';
import { InferenceServer } from '@tritium/core';

// A machine where the addon could not be built: the real loader pointed at a path with nothing there.
vi.mock('../src/native.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../src/native.js')>();
  return { ...actual, loadTorchAddon: () => actual.loadAddonFrom('/nonexistent/build/Release/torchscript.node') };
});

it('without the addon the package imports, and a PyTorch model is UNAVAILABLE saying what to install', async () => {
  const { pytorchBackend } = await import('@tritium/backend-pytorch');
  const repo = await mkdtemp(join(tmpdir(), 'tritium-no-torch-'));
  // A model.pt need not be TorchScript: the addon is missing before the file is read.
  await cp(new URL('./no-addon-model', import.meta.url), join(repo, 'm'), { recursive: true });
  const server = await InferenceServer.start({ modelRepository: repo, backends: [pytorchBackend()] });
  try {
    const [entry] = await server.repositoryIndex();
    expect(entry).toMatchObject({ name: 'm', state: 'UNAVAILABLE' });
    expect(entry!.reason).toMatch(/model 'm': the TorchScript addon of @tritium\/backend-pytorch is not built .*install the torch Python package/);
  } finally {
    await server.stop();
    await rm(repo, { recursive: true, force: true });
  }
});
