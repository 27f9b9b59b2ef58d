import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { InferenceError } from '../errors.js';

/** A model found in a repository: its directory, the config file chosen, its version directories. */
export interface ModelSource {
  readonly name: string;
  readonly directory: string;
  /** The config file in use: `configs/<configName>.pbtxt` when selected and present, else `config.pbtxt`; undefined when neither exists. */
  readonly configPath: string | undefined;
  /** Numeric version directories, ascending; other directories are ignored. */
  readonly versions: readonly number[];
  /** Set when the directory was written for one load (files sent with it): its owner removes it once nothing loaded from it serves. */
  readonly removeDirectory?: () => Promise<void>;
}

export interface RepositoryScan {
  readonly models: ReadonlyMap<string, ModelSource>;
  /** Names found in more than one repository, with the reason they cannot be served. */
  readonly conflicts: ReadonlyMap<string, string>;
}

export interface ModelRepositoryOptions {
  /** Triton's --model-config-name: use `<model>/configs/<name>.pbtxt` where it exists. */
  readonly configName?: string;
}

/** One or more repository directories, each holding `<model>/config.pbtxt` and `<model>/<version>/`. */
export class ModelRepository {
  constructor(
    readonly paths: readonly string[],
    private readonly options: ModelRepositoryOptions = {},
  ) {}

  async scan(): Promise<RepositoryScan> {
    const models = new Map<string, ModelSource>();
    const conflicts = new Map<string, string>();
    const seenIn = new Map<string, string>();
    for (const path of this.paths) {
      for (const name of await listDirectories(path, `model repository '${path}'`)) {
        const previous = seenIn.get(name);
        if (previous !== undefined) {
          conflicts.set(name, conflictReason(name, [previous, path]));
          models.delete(name);
          continue;
        }
        seenIn.set(name, path);
        models.set(name, await this.describe(name, join(path, name)));
      }
    }
    return { models, conflicts };
  }

  /** One model, looked up without scanning the others; INVALID_ARG when in two repositories, NOT_FOUND when in none. */
  async find(name: string): Promise<ModelSource> {
    const notFound = new InferenceError('NOT_FOUND', `model '${name}' is not in the model repository`);
    // A model is a directory directly in a repository: no hidden names, no paths.
    if (name.startsWith('.') || /[\\/]/.test(name)) throw notFound;
    const holders: string[] = [];
    for (const path of this.paths) {
      if (await isDirectory(join(path, name))) holders.push(path);
    }
    if (holders.length > 1) throw new InferenceError('INVALID_ARG', conflictReason(name, holders));
    if (holders.length === 0) throw notFound;
    return this.describe(name, join(holders[0]!, name));
  }

  private async describe(name: string, directory: string): Promise<ModelSource> {
    return { name, directory, configPath: await this.findConfig(directory), versions: await versionDirectories(name, directory) };
  }

  private async findConfig(directory: string): Promise<string | undefined> {
    const candidates = [join(directory, 'config.pbtxt')];
    if (this.options.configName) candidates.unshift(join(directory, 'configs', `${this.options.configName}.pbtxt`));
    for (const candidate of candidates) {
      if (await isFile(candidate)) return candidate;
    }
    return undefined;
  }
}

/** Reads a config file, naming it in the error when that fails. */
export async function readConfigText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw InferenceError.from(error, 'INVALID_ARG', `cannot read '${path}'`);
  }
}

/** A model directory's numeric version directories, ascending. */
export async function versionDirectories(name: string, directory: string): Promise<number[]> {
  const entries = await listDirectories(directory, `model '${name}'`);
  return entries
    .filter((entry) => /^(0|[1-9][0-9]*)$/.test(entry)) // canonical numbers only, so "01" and "1" cannot both be version 1
    .map(Number)
    .filter(Number.isSafeInteger)
    .sort((a, b) => a - b);
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

function conflictReason(name: string, paths: readonly string[]): string {
  return `model '${name}' appears in more than one repository: ${paths.map((p) => `'${p}'`).join(' and ')}`;
}

async function isDirectory(path: string): Promise<boolean> {
  return stat(path).then((s) => s.isDirectory(), () => false);
}

async function isFile(path: string): Promise<boolean> {
  return stat(path).then((s) => s.isFile(), () => false);
}
