import { mkdtemp, cp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it, vi } from 'vitest';
import { InferenceServer } from '@tritium/core';
import { MODELS } from './helpers.js';

// A machine where the addon could not be built at `npm install`: the package as npm leaves it under
// node_modules, with the install script's status and log, and no build/Release.
const installed = vi.hoisted(async () => {
  const { mkdirSync, mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const root = join(mkdtempSync(join(tmpdir(), 'tritium-npm-app-')), 'node_modules', '@tritium', 'backend-python');
  mkdirSync(join(root, 'build'), { recursive: true });
  const status = { ok: false, reason: 'cmake is not on PATH', log: 'build/native-build.log', packageManager: 'npm', at: '2026-01-01T00:00:00.000Z' };
  writeFileSync(join(root, 'build', 'native-build.json'), JSON.stringify(status));
  writeFileSync(join(root, 'build', 'native-build.log'), '@tritium/backend-python: the build did not start: cmake is not on PATH\n');
  return root;
});

vi.mock('../src/native.js', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../src/native.js')>();
  const root = await installed;
  return { ...actual, loadSharedMemoryAddon: () => actual.loadAddonFrom(join(root, 'build', 'Release', 'shared_memory.node'), root) };
});

it('without the addon the package imports, and a Python model is UNAVAILABLE saying what failed at install and the npm command', async () => {
  const root = await installed;
  const { pythonBackend } = await import('@tritium/backend-python');
  const repo = await mkdtemp(join(tmpdir(), 'tritium-no-addon-'));
  await cp(join(MODELS, 'add_sub'), join(repo, 'add_sub'), { recursive: true });
  const server = await InferenceServer.start({ modelRepository: repo, backends: [pythonBackend()] });
  try {
    const [entry] = await server.repositoryIndex();
    expect(entry).toMatchObject({ name: 'add_sub', state: 'UNAVAILABLE' });
    expect(entry!.reason).toBe(
      `model 'add_sub': the shared-memory addon of @tritium/backend-python is not built (${join(root, 'build', 'Release', 'shared_memory.node')} does not exist; ` +
        `the build at install at 2026-01-01T00:00:00.000Z failed: cmake is not on PATH; log: ${join(root, 'build', 'native-build.log')}): ` +
        'install cmake and a C++ compiler, then run `npm rebuild @tritium/backend-python`',
    );
  } finally {
    await server.stop();
    await rm(repo, { recursive: true, force: true });
    await rm(join(root, '..', '..', '..'), { recursive: true, force: true });
  }
});
