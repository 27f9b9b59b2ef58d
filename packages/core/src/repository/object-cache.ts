import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, rmdir, stat, writeFile } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { InferenceError } from '../errors.js';

/** One object of a model, by its path inside the model directory. */
export interface ModelObject {
  /** Relative to the model directory; a key ending in '/' is a directory marker. */
  readonly path: string;
  /** The store's name for it. */
  readonly key: string;
  /** Where it is stored, for messages (s3://bucket/key). */
  readonly address: string;
  readonly etag: string;
  readonly size: number;
}

/** Fetches one object into a local file. */
export type FetchObject = (object: ModelObject, file: string) => Promise<void>;

/** What the cache holds of one model: each file's ETag and size as the listing gave them when it was downloaded. */
type Manifest = Record<string, { etag: string; size: number }>;

const MANIFESTS = '.tritium-objects';
/** A model's files download this many at a time: a model of many small files waits on round trips, not bandwidth. */
const DOWNLOADS_AT_ONCE = 8;

/**
 * The local copy of an object-storage repository: `<directory>/<model>/...`, one file per
 * object, with a manifest per model of what was downloaded. A file is fetched only when
 * the cache lacks it at that ETag and size, so a restart reuses what an earlier run
 * downloaded. Each download goes to a hidden temporary name and is renamed into place
 * once complete, so a partial file never sits where a model reads it.
 */
export class ObjectCache {
  constructor(
    private readonly directory: string,
    private readonly fetchObject: FetchObject,
    private readonly maxObjectBytes: number,
  ) {}

  modelDirectory(model: string): string {
    return join(this.directory, model);
  }

  /** Makes the model's directory hold exactly `objects`, fetching what the cache lacks and removing what the store no longer has. */
  async localize(model: string, objects: readonly ModelObject[]): Promise<void> {
    const root = this.modelDirectory(model);
    const tooBig = objects.find((object) => object.size > this.maxObjectBytes);
    if (tooBig) {
      throw new InferenceError('RESOURCE_EXHAUSTED', `model '${model}': object '${tooBig.address}' is ${tooBig.size} bytes, over the ${this.maxObjectBytes}-byte limit on one object (objectStorage.maxObjectBytes)`);
    }
    const manifestFile = join(this.directory, MANIFESTS, `${model}.json`);
    const cached = await readManifest(manifestFile);
    const manifest: Manifest = {};
    const bring = async (object: ModelObject): Promise<void> => {
      const target = inside(root, object, model);
      if (object.path.endsWith('/')) {
        await mkdir(target, { recursive: true });
        return;
      }
      const entry = cached[object.path];
      if (entry?.etag === object.etag && entry.size === object.size && (await sizeOf(target)) === object.size) {
        manifest[object.path] = entry;
        return;
      }
      await this.download(object, target, model);
      // The listing's ETag, the one the next listing is compared with (a GET may quote it differently).
      manifest[object.path] = { etag: object.etag, size: object.size };
    };
    try {
      await eachAtOnce(objects, DOWNLOADS_AT_ONCE, bring);
      await removeOthers(root, new Set(objects.map((object) => resolve(root, object.path))));
    } finally {
      // What did download counts at the next start, even when a later object failed.
      await writeManifest(manifestFile, cached, { ...cached, ...manifest }, objects);
    }
  }

  private async download(object: ModelObject, target: string, model: string): Promise<void> {
    await mkdir(dirname(target), { recursive: true });
    const partial = join(dirname(target), `.${randomUUID()}.partial`);
    try {
      await this.fetchObject(object, partial);
      const size = await sizeOf(partial);
      if (size !== object.size) throw new InferenceError('UNAVAILABLE', `model '${model}': object '${object.address}' arrived with ${size} of its ${object.size} bytes`);
      await rm(target, { recursive: true, force: true });
      await rename(partial, target);
    } finally {
      await rm(partial, { force: true });
    }
  }
}

/** Runs `work` on every item, `limit` at a time; once all have settled, fails with the first failure. */
async function eachAtOnce<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++]!);
  };
  const results = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, worker));
  const failure = results.find((result) => result.status === 'rejected');
  if (failure) throw failure.reason;
}

/** The object's local path, refused when its key would lead out of the model directory. */
function inside(root: string, object: ModelObject, model: string): string {
  const target = resolve(root, object.path);
  if (!target.startsWith(root + sep)) throw new InferenceError('INVALID_ARG', `model '${model}': object '${object.address}' names a path outside the model directory`);
  return target;
}

/** Deletes files under `root` that are not `keep`, and the directories left empty. */
async function removeOthers(root: string, keep: ReadonlySet<string>): Promise<void> {
  for (const entry of await readdir(root, { withFileTypes: true }).catch(() => [])) {
    const path = join(root, entry.name);
    if (entry.isDirectory()) {
      await removeOthers(path, keep);
      if (!keep.has(path)) await rmdir(path).catch(() => {}); // kept when not empty
    } else if (!keep.has(path)) {
      await rm(path, { force: true });
    }
  }
}

async function sizeOf(file: string): Promise<number | undefined> {
  return stat(file).then((s) => (s.isFile() ? s.size : undefined), () => undefined);
}

async function readManifest(file: string): Promise<Manifest> {
  // A manifest that is missing, unreadable or not JSON only costs downloads.
  try {
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Manifest) : {};
  } catch {
    return {};
  }
}

/** Keeps the entries of the objects still listed, written whole or not at all; a warm start that fetched nothing writes nothing. */
async function writeManifest(file: string, cached: Manifest, entries: Manifest, objects: readonly ModelObject[]): Promise<void> {
  const listed = new Set(objects.map((object) => object.path));
  const kept = JSON.stringify(Object.fromEntries(Object.entries(entries).filter(([path]) => listed.has(path))));
  if (kept === JSON.stringify(cached)) return;
  await mkdir(dirname(file), { recursive: true });
  const partial = `${file}.${randomUUID()}.partial`;
  await writeFile(partial, kept);
  await rename(partial, file);
}
