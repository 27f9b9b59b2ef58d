import { DIRECTORY, sameSnapshot, snapshotDirectory, type DirectorySnapshot } from './fingerprint.js';
import type { ModelSource } from './model-source.js';

interface Baseline {
  /** The directory as the last load read it. */
  readonly files: DirectorySnapshot;
  /** Files that appeared during a load: the load's own output (a backend's compiled cache). */
  readonly written: ReadonlySet<string>;
}

/**
 * Poll mode's memory of each model directory as its last load read it, to tell which
 * models changed since. The snapshot is taken before the load, so an edit made while a
 * model loads is seen by the next poll. What the load itself wrote is no change: a file
 * that appeared during a load is taken as its output, and so are its rewrites during
 * later loads. Core and the ONNX backend write nothing there; a backend that caches
 * compiled models beside them may.
 */
export class ModelChangeTracker {
  private readonly baselines = new Map<string, Baseline>();

  /** True when the model was never loaded from its directory or its files differ from what the last load read. */
  async changed(source: ModelSource): Promise<boolean> {
    const baseline = this.baselines.get(source.name);
    return !baseline || !sameSnapshot(baseline.files, await snapshotOf(source));
  }

  /** Runs a load of the model, recording its directory as the load found it, whether the load succeeds or not. */
  async track(source: ModelSource, load: () => Promise<void>): Promise<void> {
    const before = await snapshotOf(source);
    try {
      await load();
    } finally {
      const after = await snapshotOf(source);
      this.baselines.set(source.name, afterLoad(before, after, this.baselines.get(source.name)?.written ?? new Set()));
    }
  }

  /** Forgets a model, so that its directory loads again when it comes back unchanged. */
  forget(name: string): void {
    this.baselines.delete(name);
  }
}

/** A model in object storage is compared by its listing (nothing a load writes into its local copy counts); a directory by its files. */
function snapshotOf(source: ModelSource): Promise<DirectorySnapshot> {
  return source.fingerprint ? Promise.resolve(source.fingerprint) : snapshotDirectory(source.directory);
}

/** The snapshot before the load, with the files the load wrote as it left them. */
function afterLoad(before: DirectorySnapshot, after: DirectorySnapshot, written: ReadonlySet<string>): Baseline {
  const files = new Map(before);
  const output = new Set(written);
  for (const [path, entry] of after) if (entry !== DIRECTORY && !before.has(path)) output.add(path);
  for (const path of output) {
    const entry = after.get(path);
    if (entry === undefined) files.delete(path);
    else files.set(path, entry);
  }
  return { files, written: output };
}
