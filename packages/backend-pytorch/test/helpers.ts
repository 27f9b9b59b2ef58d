import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildFailure } from '@tritium/native-addon';

const ADDON = fileURLToPath(new URL('../build/Release/torchscript.node', import.meta.url));
const GENERATOR = fileURLToPath(new URL('./make_repository.py', import.meta.url));

function whyMissing(): string | undefined {
  const probe = spawnSync('python3', ['-c', 'import torch'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return "python3 -c 'import torch' fails (install the torch wheel)";
  if (!existsSync(ADDON)) {
    const failure = buildFailure(fileURLToPath(new URL('..', import.meta.url)));
    return `${ADDON} is not built${failure ? ` (${failure})` : ''}: pnpm --filter @tritium/backend-pytorch build:native`;
  }
  return undefined;
}

/** Why these tests cannot run here, or undefined when torch and the addon are both present. */
export const torchMissing = whyMissing();
if (torchMissing) console.log(`skipping the PyTorch backend's tests: ${torchMissing}`);

export interface Repository {
  readonly path: string;
  /** torch's own results, keyed by model. */
  readonly expected: Record<string, Record<string, number[]>>;
  remove(): Promise<void>;
}

/** A Triton repository of TorchScript models written by make_repository.py with torch. */
export async function makeRepository(): Promise<Repository> {
  const path = await mkdtemp(join(tmpdir(), 'tritium-pytorch-'));
  const result = spawnSync('python3', [GENERATOR, path], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`make_repository.py failed: ${result.stderr}`);
  const expected = JSON.parse(await readFile(join(path, 'expected.json'), 'utf8'));
  return { path, expected, remove: () => rm(path, { recursive: true, force: true }) };
}
