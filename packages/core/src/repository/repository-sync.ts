import type { LoadModelOptions } from '../contract/model-server.js';
import { InferenceError } from '../errors.js';
import { emitTritiumWarning } from '../warnings.js';
import { byNameThenVersion } from '../model/model-manager.js';
import type { ModelControlMode, ModelIndexEntry } from '../types.js';
import { ModelChangeTracker } from './model-change-tracker.js';
import { writeModelFiles } from './model-file-override.js';
import { localized, type ModelRepository, type RepositoryScan } from './model-repository.js';
import type { ModelSource } from './model-source.js';
import { RepositoryPoller } from './repository-poller.js';

/** What the repository side asks of the models' owner (ModelManager). */
export interface RepositoryModels {
  load(name: string, locate: () => Promise<ModelSource>): Promise<void>;
  refuse(name: string, reason: string): Promise<void>;
  forget(name: string): Promise<void>;
  managedNames(): string[];
}

export interface RepositorySyncOptions {
  readonly mode: ModelControlMode;
  /** Explicit mode: the models to load at start-up ('*' for all). */
  readonly startupModels?: readonly string[];
  /** false: a model that fails to load at start-up fails the start. */
  readonly continueOnLoadError?: boolean;
  readonly pollIntervalMs?: number;
  /** Poll mode, the repository unreadable: told once until a poll reads it again. */
  readonly onPollFailure: (error: InferenceError) => void;
}

/**
 * What the model repository says should serve, applied to the models: the load at
 * start-up, polling (poll mode: new and changed models load, removed ones unload), the
 * repository's index, and where an explicit load finds its model.
 */
export class RepositorySync {
  private readonly poller: RepositoryPoller | undefined;
  /** Poll mode: what each model's last load read, to tell which models changed. */
  private readonly changes: ModelChangeTracker | undefined;

  constructor(
    private readonly repository: ModelRepository,
    private readonly models: RepositoryModels,
    private readonly options: RepositorySyncOptions,
  ) {
    if (options.mode === 'poll') {
      const changes = (this.changes = new ModelChangeTracker());
      this.poller = new RepositoryPoller(
        options.pollIntervalMs ?? 15_000,
        () => this.syncRepository(changes),
        (error) => this.pollFailed(error),
      );
    }
  }

  /** Loads what the control mode says to load at start-up: every model, or (explicit mode) the startup models. */
  async loadAtStartup(): Promise<void> {
    const scan = await this.repository.scan();
    const { mode, startupModels, continueOnLoadError } = this.options;
    const loadAll = mode !== 'explicit' || startupModels?.includes('*');
    const names = loadAll ? [...scan.models.keys(), ...scan.conflicts.keys()] : [...(startupModels ?? [])];
    const failures = await this.loadAll(scan, names);
    if (failures.length && continueOnLoadError === false) {
      throw new InferenceError('UNAVAILABLE', `models failed to load: ${failures.map((f) => f.message).join('; ')}`);
    }
  }

  /** Poll mode: starts polling every pollIntervalMs. */
  start(): void {
    this.poller?.start();
  }

  /** Poll mode: rescans the repository now instead of waiting for the next poll. */
  async pollNow(): Promise<void> {
    if (!this.poller) throw new InferenceError('UNSUPPORTED', 'pollRepository() needs modelControlMode "poll"');
    await this.poller.pollNow();
  }

  /** No poll starts from now on; one under way is not waited for (the stopping manager refuses what it would still start). */
  stop(): void {
    this.poller?.stop();
  }

  /** Once the models are stopped: lets go of the repository's object-storage connections. */
  close(): Promise<void> {
    return this.repository.close();
  }

  /** Where an explicit load finds the model: files sent with it (Triton's model file override), else the repository. */
  locate(name: string, { config, files }: LoadModelOptions): () => Promise<ModelSource> {
    return files && Object.keys(files).length > 0 ? () => writeModelFiles(name, files, config !== undefined) : () => this.repository.find(name).then(localized);
  }

  /** The models' index, with every model of the repositories never loaded added as UNAVAILABLE. */
  async index(entries: ModelIndexEntry[]): Promise<ModelIndexEntry[]> {
    const managed = new Set(entries.map((entry) => entry.name));
    const scan = await this.repository.scan();
    for (const name of scan.models.keys()) {
      if (!managed.has(name)) entries.push({ name, version: undefined, state: 'UNAVAILABLE', reason: 'not loaded' });
    }
    return entries.sort(byNameThenVersion);
  }

  /** The repository unreadable (a root gone, a disk unmounted, a bucket deleted): what is loaded keeps serving until a poll reads it again. */
  private pollFailed(error: unknown): void {
    const failure = InferenceError.from(error, 'UNAVAILABLE');
    emitTritiumWarning('TRITIUM_W002', `polling the model repository failed: ${failure.message}; loaded models keep serving`);
    this.options.onPollFailure(failure);
  }

  /** Poll mode: loads new and changed models, unloads removed ones, refuses names found twice. */
  private async syncRepository(changes: ModelChangeTracker): Promise<void> {
    const scan = await this.repository.scan();
    const changed: string[] = [];
    for (const [name, source] of scan.models) {
      if (await changes.changed(source)) changed.push(name);
    }
    await this.loadAll(scan, [...changed, ...scan.conflicts.keys()]);
    for (const name of this.models.managedNames()) {
      if (scan.models.has(name) || scan.conflicts.has(name)) continue;
      // A model directory that comes back unchanged must load again.
      changes.forget(name);
      await this.models.forget(name).catch(() => {});
    }
  }

  /** Loads each named model (refusing conflicts); returns the failures, which also show in the index. */
  private async loadAll(scan: RepositoryScan, names: readonly string[]): Promise<InferenceError[]> {
    const failures: InferenceError[] = [];
    await Promise.all(
      names.map(async (name) => {
        // A conflict or a startup name the repository lacks stays in the index as UNAVAILABLE.
        const refusal = scan.conflicts.get(name) ?? (scan.models.has(name) ? undefined : `model '${name}' is not in the model repository`);
        const work = refusal ? this.refuse(name, refusal) : this.loadFrom(scan.models.get(name)!);
        await work.catch((error) => failures.push(InferenceError.from(error)));
        if (refusal) failures.push(new InferenceError('INVALID_ARG', refusal));
      }),
    );
    return failures;
  }

  /** Loads a model found by a scan; in poll mode, remembering what the load read. */
  private loadFrom(source: ModelSource): Promise<void> {
    const load = () => this.models.load(source.name, () => localized(source));
    return this.changes ? this.changes.track(source, load) : load();
  }

  private refuse(name: string, reason: string): Promise<void> {
    // Once the name is served from one repository again, it loads even if that directory did not change.
    this.changes?.forget(name);
    return this.models.refuse(name, reason);
  }
}
