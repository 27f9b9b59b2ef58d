import type { BackendRegistry } from '../backend/registry.js';
import type { ModelConfig } from '../config/schema.js';
import { InferenceError } from '../errors.js';
import { fingerprintDirectory } from '../repository/fingerprint.js';
import type { ModelRepository, ModelSource } from '../repository/model-repository.js';
import type { ModelIndexEntry, ModelState } from '../types.js';
import { resolveModel } from './model-config-resolver.js';
import { ServedModelVersion } from './served-model-version.js';

/** What the manager knows of one model name. */
interface ManagedModel {
  readonly name: string;
  /** Versions answering requests now. */
  serving: Map<number, ServedModelVersion>;
  /** The highest serving version, for requests that name none. */
  latest: ServedModelVersion | undefined;
  /** State per version; the `undefined` key holds a model-level failure (e.g. a bad config). */
  states: Map<number | undefined, { state: ModelState; reason: string }>;
  /** The model directory's fingerprint when it was last loaded (poll mode compares it). */
  fingerprint: string | undefined;
  /** Load and unload of one model run one after another. */
  queue: Promise<unknown>;
}

export interface ModelManagerOptions {
  readonly exitTimeoutMs: number;
  readonly onStateChange: (entry: ModelIndexEntry) => void;
}

/**
 * Loads, reloads and unloads models. A reload builds the new versions completely
 * before they replace the old ones, and a version that fails to load again leaves
 * its old self serving. Old versions are drained in the background.
 */
export class ModelManager {
  private readonly models = new Map<string, ManagedModel>();
  private readonly retiring = new Set<Promise<void>>();

  constructor(
    private readonly repository: ModelRepository,
    private readonly registry: BackendRegistry,
    private readonly options: ModelManagerOptions,
  ) {}

  /** The version to run a request on; NOT_FOUND or UNAVAILABLE when there is none. */
  serving(name: string, version?: number): ServedModelVersion {
    const model = this.models.get(name);
    const served = version === undefined ? model?.latest : model?.serving.get(version);
    if (served) return served;
    if (!model || (version !== undefined && !model.states.has(version))) {
      const what = version === undefined ? `model '${name}'` : `model '${name}' version ${version}`;
      throw new InferenceError('NOT_FOUND', `${what} is not found`);
    }
    const state = version === undefined ? model.states.get(undefined) ?? [...model.states.values()][0] : model.states.get(version);
    const what = version === undefined ? `model '${name}'` : `model '${name}' version ${version}`;
    throw new InferenceError('UNAVAILABLE', `${what} is not ready${state?.reason ? `: ${state.reason}` : ''}`);
  }

  isReady(name: string, version?: number): boolean {
    const model = this.models.get(name);
    return Boolean(version === undefined ? model?.latest : model?.serving.get(version));
  }

  /** Every managed model version and its state, sorted by name then version. */
  index(): ModelIndexEntry[] {
    const entries: ModelIndexEntry[] = [];
    for (const model of this.models.values()) {
      for (const [version, { state, reason }] of model.states) entries.push({ name: model.name, version, state, reason });
    }
    return entries.sort((a, b) => a.name.localeCompare(b.name) || (a.version ?? -1) - (b.version ?? -1));
  }

  managedNames(): string[] {
    return [...this.models.keys()];
  }

  /** The fingerprint recorded at the last load attempt, for poll mode. */
  fingerprint(name: string): string | undefined {
    return this.models.get(name)?.fingerprint;
  }

  /** Loads or reloads one model; rejects with the reason when no version of it is serving afterwards. */
  load(source: ModelSource, override?: ModelConfig | string): Promise<void> {
    return this.enqueue(source.name, (model) => this.loadNow(model, source, override));
  }

  /** Marks a model that cannot be loaded (e.g. its name is in two repositories). */
  refuse(name: string, reason: string): void {
    void this.enqueue(name, async (model) => {
      if (model.serving.size === 0) this.setState(model, undefined, 'UNAVAILABLE', reason);
    });
  }

  unload(name: string): Promise<void> {
    if (!this.models.has(name)) return Promise.reject(new InferenceError('NOT_FOUND', `model '${name}' is not loaded`));
    return this.enqueue(name, async (model) => {
      const versions = [...model.serving.values()];
      model.serving = new Map();
      model.latest = undefined;
      model.states.delete(undefined);
      await Promise.all(versions.map((served) => this.retire(model, served, true)));
    });
  }

  /** Unloads everything, draining in-flight requests up to the exit timeout. */
  async unloadAll(): Promise<void> {
    await Promise.allSettled([...this.models.keys()].map((name) => this.unload(name)));
    await Promise.allSettled([...this.retiring]);
  }

  private async loadNow(model: ManagedModel, source: ModelSource, override?: ModelConfig | string): Promise<void> {
    model.fingerprint = await fingerprintDirectory(source.directory);
    let resolved;
    try {
      resolved = await resolveModel(source, override, this.registry);
    } catch (error) {
      const failure = InferenceError.from(error, 'UNAVAILABLE');
      this.recordFailure(model, undefined, failure);
      throw failure;
    }
    model.states.delete(undefined);
    for (const version of resolved.missingVersions) {
      this.setState(model, version, 'UNAVAILABLE', `version ${version} is named by the version policy but has no directory`);
    }
    for (const files of resolved.versions) {
      if (!model.serving.has(files.version)) this.setState(model, files.version, 'LOADING', '');
    }
    const loaded = await Promise.allSettled(
      resolved.versions.map((files) =>
        ServedModelVersion.load(resolved.backend, { ...files, name: source.name, config: resolved.config }),
      ),
    );

    const next = new Map<number, ServedModelVersion>();
    const failures: InferenceError[] = [];
    loaded.forEach((result, i) => {
      const version = resolved.versions[i]!.version;
      if (result.status === 'fulfilled') {
        next.set(version, result.value);
        this.setState(model, version, 'READY', result.value.description ?? '');
      } else {
        const failure = InferenceError.from(result.reason, 'UNAVAILABLE');
        failures.push(failure);
        const old = model.serving.get(version);
        if (old) next.set(version, old);
        this.recordFailure(model, version, failure);
      }
    });
    const previous = model.serving;
    model.serving = next;
    model.latest = highest(next);
    for (const [version, served] of previous) {
      if (next.get(version) !== served) this.track(this.retire(model, served, !next.has(version)));
    }
    if (next.size === 0) throw failures[0] ?? new InferenceError('UNAVAILABLE', `model '${source.name}' has no version to serve`);
  }

  /** Records a load failure; a version (or model) still serving keeps READY and shows the failure as its reason. */
  private recordFailure(model: ManagedModel, version: number | undefined, failure: InferenceError): void {
    const serving = version === undefined ? model.serving.size > 0 : model.serving.has(version);
    if (serving) {
      for (const v of version === undefined ? model.serving.keys() : [version]) {
        this.setState(model, v, 'READY', `reload failed, previous load still serving: ${failure.message}`);
      }
    } else {
      this.setState(model, version, 'UNAVAILABLE', failure.message);
    }
  }

  /** Drains and finalizes a version that no longer serves; `gone` when nothing replaces it. */
  private async retire(model: ManagedModel, served: ServedModelVersion, gone: boolean): Promise<void> {
    if (gone) this.setState(model, served.version, 'UNLOADING', '');
    await served.unload(this.options.exitTimeoutMs);
    if (gone && !model.serving.has(served.version)) this.setState(model, served.version, 'UNAVAILABLE', 'unloaded');
  }

  private track(retirement: Promise<void>): void {
    this.retiring.add(retirement);
    void retirement.finally(() => this.retiring.delete(retirement));
  }

  private enqueue(name: string, work: (model: ManagedModel) => Promise<void>): Promise<void> {
    let model = this.models.get(name);
    if (!model) {
      model = { name, serving: new Map(), latest: undefined, states: new Map(), fingerprint: undefined, queue: Promise.resolve() };
      this.models.set(name, model);
    }
    const run = model.queue.then(() => work(model));
    model.queue = run.catch(() => {});
    return run;
  }

  private setState(model: ManagedModel, version: number | undefined, state: ModelState, reason: string): void {
    model.states.set(version, { state, reason });
    this.options.onStateChange({ name: model.name, version, state, reason });
  }
}

function highest(versions: ReadonlyMap<number, ServedModelVersion>): ServedModelVersion | undefined {
  let best: ServedModelVersion | undefined;
  for (const served of versions.values()) if (!best || served.version > best.version) best = served;
  return best;
}
