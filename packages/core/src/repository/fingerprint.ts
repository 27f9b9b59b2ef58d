import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** Every entry under a model directory, by relative path: DIRECTORY, or a file's size and modification time. */
export type DirectorySnapshot = ReadonlyMap<string, string>;

export const DIRECTORY = '/';

/**
 * What poll mode compares to tell that a model changed, as Triton compares
 * modification times.
 */
export async function snapshotDirectory(directory: string): Promise<DirectorySnapshot> {
  const entries = new Map<string, string>();
  await collect(directory, '', entries);
  return entries;
}

export function sameSnapshot(a: DirectorySnapshot, b: DirectorySnapshot): boolean {
  if (a.size !== b.size) return false;
  for (const [path, entry] of a) if (b.get(path) !== entry) return false;
  return true;
}

async function collect(root: string, relative: string, entries: Map<string, string>): Promise<void> {
  const children = await readdir(join(root, relative), { withFileTypes: true }).catch(() => []);
  for (const child of children) {
    const path = relative ? join(relative, child.name) : child.name;
    // stat follows symbolic links, so a linked version directory is looked into too.
    const info = await stat(join(root, path)).catch(() => undefined);
    if (info?.isDirectory()) {
      entries.set(path, DIRECTORY);
      await collect(root, path, entries);
    } else if (info) {
      entries.set(path, `${info.size} ${info.mtimeMs}`);
    }
  }
}
