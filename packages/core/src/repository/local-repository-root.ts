import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { InferenceError } from '../errors.js';
import type { ModelSource } from './model-source.js';
import type { RepositoryRoot } from './repository-root.js';
import { versionNumbers } from './version-names.js';

/** A repository directory, holding `<model>/config.pbtxt` and `<model>/<version>/`. */
export class LocalRepositoryRoot implements RepositoryRoot {
  constructor(
    readonly location: string,
    private readonly configName: string | undefined,
  ) {}

  async models(): Promise<Map<string, ModelSource>> {
    const models = new Map<string, ModelSource>();
    for (const name of await listDirectories(this.location, `model repository '${this.location}'`)) {
      // A model removed between the listing and now is simply not there.
      const source = await this.describe(name);
      if (source) models.set(name, source);
    }
    return models;
  }

  async describe(name: string): Promise<ModelSource | undefined> {
    const directory = join(this.location, name);
    if (!(await isDirectory(directory))) return undefined;
    return { name, directory, configPath: await this.findConfig(directory), versions: await versionDirectories(name, directory) };
  }

  async close(): Promise<void> {}

  private async findConfig(directory: string): Promise<string | undefined> {
    const candidates = [join(directory, 'config.pbtxt')];
    if (this.configName) candidates.unshift(join(directory, 'configs', `${this.configName}.pbtxt`));
    for (const candidate of candidates) {
      if (await isFile(candidate)) return candidate;
    }
    return undefined;
  }
}

/** A model directory's numeric version directories, ascending. */
export async function versionDirectories(name: string, directory: string): Promise<number[]> {
  return versionNumbers(await listDirectories(directory, `model '${name}'`));
}

/** Directory names under `path`, hidden ones left out; a symbolic link counts as what it points to. */
async function listDirectories(path: string, what: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(path, { withFileTypes: true });
  } catch (error) {
    throw InferenceError.from(error, 'NOT_FOUND', `cannot read ${what}`);
  }
  const names: string[] = [];
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    if (entry.isSymbolicLink() ? await isDirectory(join(path, entry.name)) : entry.isDirectory()) names.push(entry.name);
  }
  return names.sort();
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then((s) => s.isDirectory(), () => false);
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then((s) => s.isFile(), () => false);
}
