import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InferenceError } from '../errors.js';
import type { ObjectStorageOptions } from '../types.js';
import type { DirectorySnapshot } from './fingerprint.js';
import type { ModelSource } from './model-source.js';
import { ObjectCache, type ModelObject } from './object-cache.js';
import type { ObjectStore, StoredObject } from './object-store.js';
import type { RepositoryRoot, RepositoryRootOptions } from './repository-root.js';
import { versionNumbers } from './version-names.js';

/** The default limit on one object: past it a model's load is refused rather than filling the disk. */
const DEFAULT_MAX_OBJECT_BYTES = 8 * 2 ** 30;

/**
 * A repository under a prefix of a bucket (S3) or container (Azure). Listing models and
 * versions and choosing the config read only the store's listing; a model's objects are
 * downloaded into the local cache when it loads (ModelSource.localize), so the model
 * reads them from disk as from a local repository.
 */
export class ObjectStorageRoot implements RepositoryRoot {
  readonly location: string;
  private readonly cache: ObjectCache;

  constructor(
    private readonly store: ObjectStore,
    private readonly options: RepositoryRootOptions,
  ) {
    this.location = store.location.url;
    // Checked already, with every repository's options (ModelRepository).
    const maxObjectBytes = options.objectStorage?.maxObjectBytes ?? DEFAULT_MAX_OBJECT_BYTES;
    this.cache = new ObjectCache(cacheDirectory(store, options.objectStorage), (object, file) => store.download(object, file), maxObjectBytes);
  }

  /** Every model, from one listing of the repository's prefix. */
  async models(): Promise<Map<string, ModelSource>> {
    const { prefix, url } = this.store.location;
    const stored = await this.store.objects(prefix);
    // As in Triton, a path with nothing under it is no repository (a bucket's root may be empty).
    if (stored.length === 0 && prefix !== '') throw new InferenceError('NOT_FOUND', `cannot read model repository '${url}': nothing is stored under it`);
    const byModel = new Map<string, StoredObject[]>();
    for (const object of stored) {
      const slash = object.key.indexOf('/', prefix.length);
      // Objects directly under the repository are no model (Triton looks at directories only).
      if (slash < 0) continue;
      const name = object.key.slice(prefix.length, slash);
      if (name === '' || name.startsWith('.')) continue;
      const objects = byModel.get(name) ?? [];
      objects.push(object);
      byModel.set(name, objects);
    }
    const models = new Map<string, ModelSource>();
    for (const name of [...byModel.keys()].sort()) models.set(name, this.sourceOf(name, byModel.get(name)!));
    return models;
  }

  async describe(name: string): Promise<ModelSource | undefined> {
    const objects = await this.store.objects(`${this.store.location.prefix}${name}/`);
    return objects.length === 0 ? undefined : this.sourceOf(name, objects);
  }

  /** The model as its objects describe it: versions and config from their keys, files fetched by localize(). */
  private sourceOf(name: string, stored: readonly StoredObject[]): ModelSource {
    const modelPrefix = `${this.store.location.prefix}${name}/`;
    const objects: ModelObject[] = stored
      .map(({ key, etag, size }) => ({ path: key.slice(modelPrefix.length), key, address: this.store.address(key), etag, size }))
      .filter((object) => object.path !== ''); // the model directory's own marker
    const paths = new Set(objects.map((object) => object.path));
    const directory = this.cache.modelDirectory(name);
    const configName = this.options.configName;
    const configFile = [...(configName ? [`configs/${configName}.pbtxt`] : []), 'config.pbtxt'].find((path) => paths.has(path));
    return {
      name,
      directory,
      configPath: configFile && join(directory, configFile),
      // A version is a "directory": a key with something under it, or a marker ending in '/'.
      versions: versionNumbers(objects.filter((object) => object.path.includes('/')).map((object) => object.path.split('/')[0]!)),
      localize: () => this.cache.localize(name, objects),
      fingerprint: fingerprintOf(objects),
    };
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

/** ServerOptions.objectStorage, refused naming the field that is wrong; checked whatever the repositories, so that a mistake shows before one is in a bucket. */
export function checkObjectStorageOptions(options: ObjectStorageOptions | undefined): void {
  if (options === undefined) return;
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InferenceError('INVALID_ARG', `\`objectStorage\` must be an object { cacheDirectory?, maxObjectBytes? }, got ${Array.isArray(options) ? 'an array' : String(options)}`);
  }
  const { cacheDirectory, maxObjectBytes } = options;
  if (cacheDirectory !== undefined && (typeof cacheDirectory !== 'string' || cacheDirectory === '')) {
    throw new InferenceError('INVALID_ARG', `\`objectStorage.cacheDirectory\` must be a non-empty directory path, got ${JSON.stringify(cacheDirectory)}`);
  }
  if (maxObjectBytes !== undefined && (!Number.isSafeInteger(maxObjectBytes) || maxObjectBytes < 1)) {
    throw new InferenceError('INVALID_ARG', `\`objectStorage.maxObjectBytes\` must be a positive integer, got ${String(maxObjectBytes)}`);
  }
}

/**
 * Where the repository's files land: `objectStorage.cacheDirectory`, else Triton's
 * variable for the store's kind (TRITON_AWS_MOUNT_DIRECTORY, ...), else a directory under
 * the OS temp; below it, one folder per store and prefix, so that repositories never
 * share files.
 */
function cacheDirectory(store: ObjectStore, options: ObjectStorageOptions | undefined): string {
  const base = options?.cacheDirectory ?? process.env[store.mountVariable] ?? join(tmpdir(), 'tritium-object-storage');
  return join(base, ...store.cacheFolders, ...store.location.prefix.split('/').filter(Boolean));
}

function fingerprintOf(objects: readonly ModelObject[]): DirectorySnapshot {
  return new Map(objects.map((object) => [object.path, `${object.etag} ${object.size}`]));
}
