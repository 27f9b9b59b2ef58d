import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';

/** Every file under `directory` as an object to upload: its key (`prefix`, then its '/'-separated path there) and its bytes. */
export async function directoryObjects(directory: string, prefix: string): Promise<{ key: string; body: Buffer }[]> {
  const objects: { key: string; body: Buffer }[] = [];
  for (const entry of await readdir(directory, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    objects.push({ key: `${prefix}${relative(directory, path).split('\\').join('/')}`, body: await readFile(path) });
  }
  return objects;
}
