import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';
import { InferenceServer } from '@tritium/core';

// A machine where the addon was never built: the package as pnpm 10 leaves it when the project has
// not allowed its install script (no build/ at all), the real loader pointed there.
const { app, root } = vi.hoisted(() => {
  const app = `${process.env.TMPDIR ?? '/tmp'}/tritium-pnpm-app-${process.pid}`;
  return { app, root: `${app}/node_modules/.pnpm/@tritium+backend-pytorch@0.1.0/node_modules/@tritium/backend-pytorch` };
});
vi.mock('../src/native.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../src/native.js')>();
  return { ...actual, loadTorchAddon: () => actual.loadAddonFrom(`${root}/build/Release/torchscript.node`, root) };
});

it('without the addon the package imports, and a PyTorch model is UNAVAILABLE saying what to install and the pnpm commands', async () => {
  const { pytorchBackend } = await import('@tritium/backend-pytorch');
  const repo = await mkdtemp(join(tmpdir(), 'tritium-no-torch-'));
  // A model.pt need not be TorchScript: the addon is missing before the file is read.
  await cp(new URL('./no-addon-model', import.meta.url), join(repo, 'm'), { recursive: true });
  const server = await InferenceServer.start({ modelRepository: repo, backends: [pytorchBackend()] });
  try {
    const [entry] = await server.repositoryIndex();
    expect(entry).toMatchObject({ name: 'm', state: 'UNAVAILABLE' });
    expect(entry!.reason).toBe(
      `model 'm': the TorchScript addon of @tritium/backend-pytorch is not built (${root}/build/Release/torchscript.node does not exist; its install script did not run): ` +
        'install the torch Python package (`pip install torch`; the CPU wheel will do), cmake and a C++ compiler, ' +
        'then run `pnpm approve-builds` (allowing its install script), then `pnpm rebuild @tritium/backend-pytorch`',
    );
  } finally {
    await server.stop();
    await rm(repo, { recursive: true, force: true });
    await rm(app, { recursive: true, force: true });
  }
});
