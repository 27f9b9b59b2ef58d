import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A summary of every file under a model directory (path, size, modification time).
 * Poll mode reloads a model when its fingerprint changes, as Triton compares
 * modification times.
 */
export async function fingerprintDirectory(directory: string): Promise<string> {
  const parts: string[] = [];
  await collect(directory, '', parts);
  return parts.sort().join('\n');
}

async function collect(root: string, relative: string, parts: string[]): Promise<void> {
  const entries = await readdir(join(root, relative), { withFileTypes: true }).catch(() => []);
  for (const entry of entries) {
    const path = relative ? join(relative, entry.name) : entry.name;
    // stat follows symbolic links, so a linked version directory is looked into too.
    const info = await stat(join(root, path)).catch(() => undefined);
    if (info?.isDirectory()) {
      parts.push(`${path}/`);
      await collect(root, path, parts);
    } else if (info) {
      parts.push(`${path} ${info.size} ${info.mtimeMs}`);
    }
  }
}
