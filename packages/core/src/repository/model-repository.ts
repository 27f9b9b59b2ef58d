import { readFile } from 'node:fs/promises';
import { InferenceError } from '../errors.js';
import type { ModelSource } from './model-source.js';
import { checkObjectStorageOptions } from './object-storage-root.js';
import type { RepositoryRoot, RepositoryRootOptions } from './repository-root.js';
import { repositoryRootFor } from './repository-root-for.js';

export interface RepositoryScan {
  readonly models: ReadonlyMap<string, ModelSource>;
  /** Names found in more than one repository, with the reason they cannot be served. */
  readonly conflicts: ReadonlyMap<string, string>;
}

/** One or more repositories (directories or object-storage prefixes), each holding `<model>/config.pbtxt` and `<model>/<version>/`. */
export class ModelRepository {
  private readonly roots: readonly RepositoryRoot[];

  constructor(paths: readonly string[], options: RepositoryRootOptions = {}) {
    checkObjectStorageOptions(options.objectStorage);
    this.roots = paths.map((path) => repositoryRootFor(path, options));
  }

  async scan(): Promise<RepositoryScan> {
    const models = new Map<string, ModelSource>();
    const conflicts = new Map<string, string>();
    const seenIn = new Map<string, string>();
    for (const root of this.roots) {
      for (const [name, source] of await root.models()) {
        const previous = seenIn.get(name);
        if (previous !== undefined) {
          conflicts.set(name, conflictReason(name, [previous, root.location]));
          models.delete(name);
          continue;
        }
        seenIn.set(name, root.location);
        models.set(name, source);
      }
    }
    return { models, conflicts };
  }

  /** One model, looked up without scanning the others; INVALID_ARG when in two repositories, NOT_FOUND when in none. */
  async find(name: string): Promise<ModelSource> {
    const notFound = new InferenceError('NOT_FOUND', `model '${name}' is not in the model repository`);
    // A model is a directory directly in a repository: no hidden names, no paths.
    if (name.startsWith('.') || /[\\/]/.test(name)) throw notFound;
    const found: { location: string; source: ModelSource }[] = [];
    for (const root of this.roots) {
      const source = await root.describe(name);
      if (source) found.push({ location: root.location, source });
    }
    if (found.length > 1) throw new InferenceError('INVALID_ARG', conflictReason(name, found.map((f) => f.location)));
    if (found.length === 0) throw notFound;
    return found[0]!.source;
  }

  /** Lets go of object-storage connections. */
  async close(): Promise<void> {
    await Promise.all(this.roots.map((root) => root.close()));
  }
}

/** The source with its files on local disk: what a load reads. */
export async function localized(source: ModelSource): Promise<ModelSource> {
  await source.localize?.();
  return source;
}

/** Reads a config file, naming it in the error when that fails. */
export async function readConfigText(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw InferenceError.from(error, 'INVALID_ARG', `cannot read '${path}'`);
  }
}

function conflictReason(name: string, paths: readonly string[]): string {
  return `model '${name}' appears in more than one repository: ${paths.map((p) => `'${p}'`).join(' and ')}`;
}
