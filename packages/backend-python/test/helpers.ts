import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { cp, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, expect } from 'vitest';
import { InferenceServer, type Logger, type ServerOptions } from '@tritium/core';
import { onnxBackend } from '@tritium/backend-onnx';
import { pythonBackend, type PythonBackendOptions } from '@tritium/backend-python';
import { loadSharedMemoryAddon } from '../src/native.js';
import { removeRegions, sharedMemoryDirectory } from '../src/shared-region.js';

/** Why the shared-memory tests cannot run here (printed once), or undefined when the addon loads. */
export const addonMissing: string | undefined = (() => {
  try {
    loadSharedMemoryAddon();
    return undefined;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    console.warn(`skipping the shared-memory tests: ${reason}`);
    return reason;
  }
})();

export const SHM_DIR = sharedMemoryDirectory();

/** Files in the shared-memory directory whose names start with `prefix`. */
export function filesWith(prefix: string): string[] {
  return readdirSync(SHM_DIR)
    .filter((name) => name.startsWith(prefix))
    .sort();
}

/**
 * A fresh file-name prefix for each test; after each test nothing with that prefix may be
 * left in the shared-memory directory (checked, then removed so one failure does not leak).
 */
export function useShmPrefix(): { readonly current: string } {
  const state = { current: '' };
  beforeEach(() => {
    state.current = `tritium-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  });
  afterEach(() => {
    const left = filesWith(state.current);
    removeRegions(SHM_DIR, state.current);
    expect(left, 'files left in the shared-memory directory').toEqual([]);
  });
  return state;
}

export const MODELS = fileURLToPath(new URL('./models/', import.meta.url));
export const ONNX_MODELS = fileURLToPath(new URL('../../backend-onnx/models/', import.meta.url));
/** Test models served by ONNX, and the ONNX file each is copied with (the repository keeps only its config). */
const ONNX_FILES: Readonly<Record<string, string>> = { add_sub_onnx: 'add_sub.onnx' };

/** Why Python models cannot run here (no addon, no python3 or no numpy), or undefined when they can. */
export const pythonMissing: string | undefined =
  addonMissing ??
  (() => {
    try {
      execFileSync('python3', ['-c', 'import numpy'], { stdio: 'ignore' });
      return undefined;
    } catch {
      return 'python3 with numpy is not available';
    }
  })();
if (pythonMissing) console.warn(`skipping Python backend tests: ${pythonMissing}`);

/** A logger that keeps every line, by level. */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    error: (m) => lines.push(`ERROR ${m}`),
    warn: (m) => lines.push(`WARNING ${m}`),
    info: (m) => lines.push(`INFO ${m}`),
    verbose: (m) => lines.push(`VERBOSE ${m}`),
  };
}

/** This process's shared-memory files (the stub protocol names them tritium-<node pid>-…). */
export function shmLeftovers(): string[] {
  return readdirSync('/dev/shm').filter((name) => name.startsWith(`tritium-${process.pid}-`));
}

/** Live stub processes started by this process. */
export async function stubProcesses(): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const [status, cmdline] = await Promise.all([
      readFile(`/proc/${entry}/status`, 'utf8').catch(() => ''),
      readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => ''),
    ]);
    const parent = /^PPid:\s+(\d+)/m.exec(status)?.[1];
    const zombie = /^State:\s+Z/m.exec(status);
    if (Number(parent) === process.pid && !zombie && cmdline.includes('tritium_stub.py')) pids.push(Number(entry));
  }
  return pids;
}

/**
 * A temp repository of the named test models (and ONNX models copied in as
 * `<name>/1/model.onnx`), a server over it, and after each test: the server stopped,
 * and a check that no stub process and no shared-memory file is left.
 */
export function usePythonServer() {
  const state: { server?: InferenceServer; repo?: string } = {};
  afterEach(async () => {
    await state.server?.stop();
    state.server = undefined;
    if (state.repo) await rm(state.repo, { recursive: true, force: true });
    state.repo = undefined;
    expect(await stubProcesses()).toEqual([]);
    expect(shmLeftovers()).toEqual([]);
  });
  return {
    state,
    /** A temp repository holding copies of the named test models. */
    async repository(models: readonly string[]): Promise<string> {
      const repo = (state.repo = await mkdtemp(join(tmpdir(), 'tritium-python-')));
      for (const name of models) {
        await cp(join(MODELS, name), join(repo, name), { recursive: true });
        const onnxFile = ONNX_FILES[name];
        if (onnxFile) await cp(join(ONNX_MODELS, onnxFile), join(repo, name, '1', 'model.onnx'));
      }
      return repo;
    },
    /** A server (Python and ONNX backends) over a repository of the named models, all loaded. */
    async start(models: readonly string[], options: Partial<ServerOptions> & { python?: PythonBackendOptions } = {}): Promise<InferenceServer> {
      const repo = await this.repository(models);
      state.server = await InferenceServer.start({ modelRepository: repo, backends: [pythonBackend(options.python), onnxBackend()], ...options });
      return state.server;
    },
  };
}
