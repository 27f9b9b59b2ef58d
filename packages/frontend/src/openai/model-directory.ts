import { stat } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * A model's directory: `<root>/<name>` in the first of the repository roots that has it.
 * Undefined when the frontend was given no repository, or none has the model (a model
 * an application loaded with a config of its own may have no directory).
 */
export async function modelDirectory(roots: readonly string[], name: string): Promise<string | undefined> {
  for (const root of roots) {
    const directory = join(root, name);
    if (await isDirectory(directory)) return directory;
  }
  return undefined;
}

export async function isFile(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isFile() ?? false;
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}
