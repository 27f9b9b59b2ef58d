import { performance } from 'node:perf_hooks';
import type { BackendRegistry } from '../backend/registry.js';
import type { NormalizedModelConfig } from '../config/schema.js';
import { InferenceError } from '../errors.js';
import { emitTritiumWarning } from '../warnings.js';
import type { ModelSource } from '../repository/model-source.js';
import type { InferRequest, SequenceOptions } from '../contract/inference.js';
import type { ModelServer } from '../contract/model-server.js';
import type { ResponseCache } from '../cache/response-cache.js';
import type { ServerLogger } from '../observability/server-logger.js';
import type { LatencyObserver } from '../observability/statistics.js';
import type { RateLimiter } from '../scheduling/rate-limiter.js';
import type { ModelIndexEntry } from '../types.js';
import { LoadSlots, lendingServer } from './load-slots.js';
import { readConfig, resolveModel, type ConfigOverride, type ResolvedModel } from './model-config-resolver.js';
import { RepositoryAgentRegistry } from '../repository-agents/agent-registry.js';
import { RepositoryAgentChain } from '../repository-agents/agent-chain.js';
import { withLoadRetries } from './load-retry.js';
import { ModelStates } from './model-states.js';
import { checkEnsembleMembers, ensembleMembers } from './ensemble-members.js';
import { checkSequenceOptions } from './sequence-request.js';
import { ServedModelVersion } from './served-model-version.js';
import { withTimeout } from './with-timeout.js';

/** What the manager knows of one model name. */
interface ManagedModel {
  readonly name: string;
  /** Versions answering requests now. */
  serving: Map<number, ServedModelVersion>;
  /** The highest serving version, for requests that name none. */
  latest: ServedModelVersion | undefined;
  /** Versions unloading with nothing in their place: they still take requests of their live sequences. */
  readonly draining: Set<ServedModelVersion>;
  readonly states: ModelStates;
  /** Loads and unloads of one model run one after another. */
  queue: Promise<unknown>;
  /** Operations queued or running on this record. */
  pending: number;
  /** Removes the directory the serving versions were loaded from, when it was written for their load (ModelSource.removeDirectory). */
  removeDirectory: (() => Promise<void>) | undefined;
  /** The repository agents of the load the serving versions came from: they hear of the versions' unload. */
  agents: RepositoryAgentChain | undefined;
}

export interface ModelManagerOptions {
  readonly exitTimeoutMs: number;
  readonly onStateChange: (entry: ModelIndexEntry) => void;
  /** Handed to every model, for models that call others. */
  readonly server: ModelServer;
  /** The server's log: models get it as their logger, and their load steps are verbose lines in it. */
  readonly logger: ServerLogger;
  /** Takes each loaded version's per-request latencies, when metrics need them. */
  readonly observerFor?: (model: string, version: number) => LatencyObserver | undefined;
  /** The server's response cache, for models whose config enables response_cache. */
  readonly responseCache?: ResponseCache;
  /** The most instances one model version may have (ServerOptions.maxInstancesPerModel). */
  readonly maxInstancesPerModel: number;
  /** How many loads run at once (ServerOptions.modelLoadThreadCount). */
  readonly loadThreadCount: number;
  /** The server's rate limiter (ServerOptions.rateLimit, mode execution_count); none when off. */
  readonly rateLimiter?: RateLimiter;
  /** The agents a config's model_repository_agents may name (ServerOptions.repositoryAgents and the built-in ones). */
  readonly repositoryAgents?: RepositoryAgentRegistry;
  /** How many times a version's failed load is tried again (ServerOptions.modelLoadRetryCount); default 0. */
  readonly loadRetryCount?: number;
}

/**
 * Loads, reloads and unloads models, one operation at a time per model. As in Triton,
 * a load builds every selected version before any of them serves; if one fails, the
 * new versions are dropped, the old ones keep serving and the load rejects. Replaced
 * versions are drained in the background.
 */
export class ModelManager {
  private readonly models = new Map<string, ManagedModel>();
  /** Versions draining and finalizing, and directories written for their loads being removed after; stop() waits for them all. */
  private readonly retiring = new Set<Promise<void>>();
  private closed = false;
  /** Ensembles waiting for their models' loads now, with the models each uses: a cycle is refused instead of waited on forever. */
  private readonly ensemblesLoading = new Map<string, readonly string[]>();
  /** Set by stop(): every version drains against this one deadline from then on. */
  private stopDeadline: number | undefined;
  private readonly slots: LoadSlots;
  private readonly agents: RepositoryAgentRegistry;
  private readonly loadRetryCount: number;

  constructor(
    private readonly registry: BackendRegistry,
    private readonly options: ModelManagerOptions,
  ) {
    this.slots = new LoadSlots(options.loadThreadCount);
    this.agents = options.repositoryAgents ?? new RepositoryAgentRegistry();
    this.loadRetryCount = options.loadRetryCount ?? 0;
  }

  /** The version to run a request on; otherwise Triton's NOT_FOUND or UNAVAILABLE, with the reason after. */
  serving(name: string, version?: number): ServedModelVersion {
    const model = this.models.get(name);
    const served = version === undefined ? model?.latest : model?.serving.get(version);
    if (served) return served;
    const unknown = `Request for unknown model: '${name}'`;
    if (!model) throw new InferenceError('NOT_FOUND', `${unknown} is not found`);
    if (version === undefined) throw new InferenceError('NOT_FOUND', `${unknown} has no available versions${because(model.states.forLatest())}`);
    if (!model.states.has(version)) throw new InferenceError('NOT_FOUND', `${unknown} version ${version} is not found`);
    throw new InferenceError('UNAVAILABLE', `${unknown} version ${version} is not at ready state${because(model.states.get(version))}`);
  }

  /**
   * A version that is unloading (or the server stopping) but still takes this request
   * because it continues one of its live sequences, as Triton lets in-flight sequences
   * finish while it exits.
   */
  continuing(name: string, request: InferRequest): ServedModelVersion | undefined {
    const model = this.models.get(name);
    if (!model || model.draining.size === 0) return undefined;
    let sequence: SequenceOptions | undefined;
    try {
      sequence = checkSequenceOptions((request as Partial<InferRequest> | undefined)?.sequence);
    } catch {
      return undefined; // malformed: refused as the model's state says
    }
    for (const served of model.draining) {
      if ((request.modelVersion === undefined || request.modelVersion === served.version) && served.continues(sequence)) return served;
    }
    return undefined;
  }

  /** Ready: a version serves, and each of its instances that checks its own readiness says it is ready. */
  async isReady(name: string, version?: number): Promise<boolean> {
    const model = this.models.get(name);
    const served = version === undefined ? model?.latest : model?.serving.get(version);
    if (served === undefined) return false;
    // An ensemble is ready while every model it uses is.
    if (served.context.config.ensemble_scheduling) return this.missingMember(served) === undefined;
    return served.instancesReady();
  }

  /** Every managed model version and its state, sorted by name then version; an ensemble whose model is gone shows UNAVAILABLE saying which. */
  index(): ModelIndexEntry[] {
    return [...this.models.values()]
      .flatMap((model) =>
        model.states.entries().map((entry) => {
          const served = entry.version === undefined ? undefined : model.serving.get(entry.version);
          const missing = entry.state === 'READY' && served?.context.config.ensemble_scheduling ? this.missingMember(served) : undefined;
          return missing ? { ...entry, state: 'UNAVAILABLE' as const, reason: `model '${missing}', which the ensemble uses, is not ready` } : entry;
        }),
      )
      .sort(byNameThenVersion);
  }

  /** Whether `model` is `target` or, through ensembles loading now, uses it. */
  private uses(model: string, target: string, seen = new Set<string>()): boolean {
    if (model === target) return true;
    if (seen.has(model)) return false;
    seen.add(model);
    return (this.ensemblesLoading.get(model) ?? []).some((member) => this.uses(member, target, seen));
  }

  /** The first model an ensemble uses that serves no version now. */
  private missingMember(served: ServedModelVersion): string | undefined {
    return ensembleMembers(served.context.config).find((member) => !this.models.get(member)?.latest);
  }

  /**
   * An ensemble's load waits for loads of its models under way (at startup they load
   * together), then checks its steps against their configs. A model that uses itself,
   * directly or through another ensemble loading now, is refused: waiting would never end.
   */
  private async checkEnsemble(name: string, config: NormalizedModelConfig): Promise<void> {
    const members = ensembleMembers(config);
    this.ensemblesLoading.set(name, members);
    try {
      for (const member of members) {
        if (this.uses(member, name)) {
          throw new InferenceError('INVALID_ARG', `ensemble '${name}': its steps use model '${member}', which uses '${name}' in turn (a cycle)`);
        }
        await this.models.get(member)?.queue;
      }
      checkEnsembleMembers(name, config, (member, version) => {
        const model = this.models.get(member);
        const served = version === undefined ? model?.latest : model?.serving.get(version);
        if (served) return served.context.config;
        // Triton's words; why the model does not serve follows.
        if (model?.latest) throw new InferenceError('INVALID_ARG', `ensemble '${name}' depends on '${member}' whose required version ${version} is not loaded`);
        const why = model ? because(model.states.forLatest()) : ': it is not in the model repository';
        throw new InferenceError('INVALID_ARG', `ensemble '${name}' depends on '${member}' which has no loaded version${why}`);
      });
    } finally {
      this.ensemblesLoading.delete(name);
    }
  }

  /** The versions serving now, of one model or of all, by name then version. */
  servedVersions(name?: string): ServedModelVersion[] {
    const models = name === undefined ? [...this.models.values()] : [this.models.get(name)].filter((m) => m !== undefined);
    return models
      .flatMap((model) => [...model.serving.values()])
      .sort((a, b) => a.context.name.localeCompare(b.context.name) || a.version - b.version);
  }

  /** The cache a model's versions use: the server's, when the config enables response_cache. */
  private cacheFor(name: string, config: NormalizedModelConfig): ResponseCache | undefined {
    if (!config.response_cache.enable) return undefined;
    if (!this.options.responseCache) {
      emitTritiumWarning('TRITIUM_W003', `model '${name}' enables response_cache, but the server has no cache (ServerOptions.responseCache): it is served uncached`);
    }
    return this.options.responseCache;
  }

  managedNames(): string[] {
    return [...this.models.keys()];
  }

  /**
   * Loads or reloads one model. `locate` finds its directory when the load's turn
   * comes, so loads and unloads of a model happen in the order they were asked for.
   * Failures read as Triton's, the reason after: INTERNAL `failed to load '<m>', failed to
   * poll from model repository` when the model cannot be found or its config read or
   * accepted; INVALID_ARG `load failed for model '<m>': ...` when an ensemble's models do
   * not serve or a version fails to build.
   */
  load(name: string, locate: () => Promise<ModelSource>, override?: ConfigOverride): Promise<void> {
    return this.enqueue(name, async (model) => {
      let source: ModelSource;
      try {
        source = await locate();
      } catch (error) {
        const failure = InferenceError.from(error, 'UNAVAILABLE');
        // A name the repository never had leaves no trace in the index.
        if (failure.code === 'NOT_FOUND' && model.states.isEmpty) this.drop(model);
        else this.recordModelFailure(model, failure);
        throw this.pollFailure(name, failure);
      }
      await this.loadNow(model, source, override).catch(async (error: unknown) => {
        // Nothing loaded from a directory written for this load serves: it goes now.
        await this.removeWritten(source.removeDirectory);
        throw error;
      });
    });
  }

  /** Marks a model that cannot be loaded (e.g. its name is in two repositories), unloading what it served. */
  refuse(name: string, reason: string): Promise<void> {
    return this.enqueue(name, async (model) => {
      await this.retireAll(model);
      model.states.fail(reason);
    });
  }

  /** Poll mode, a model directory gone: unloads what served and drops the model from the index once nothing serves. */
  forget(name: string): Promise<void> {
    return this.enqueue(name, async (model) => {
      if (model.serving.size > 0) await this.retireAll(model);
      else this.drop(model);
    });
  }

  /**
   * Unloads a model; as in Triton, a name that was never loaded is already unloaded. With
   * `dependents` (Triton's unload_dependents), the models an ensemble uses go with it
   * when no other serving ensemble uses them, and so on down nested ensembles.
   */
  async unload(name: string, dependents = false): Promise<void> {
    const names = dependents ? this.withMembers(name) : [name];
    await Promise.all(names.filter((each) => this.models.has(each)).map((each) => this.enqueue(each, (model) => this.retireAll(model))));
  }

  /** `name` and the models its ensemble uses that nothing else serving uses, level after level (Triton's cascading removal). */
  private withMembers(name: string): string[] {
    const removed = new Set([name]);
    const membersOf = (model: string) => [...(this.models.get(model)?.serving.values() ?? [])].flatMap((served) => ensembleMembers(served.context.config));
    const usedElsewhere = (member: string) => [...this.models.keys()].some((other) => !removed.has(other) && membersOf(other).includes(member));
    for (let level = [name]; level.length > 0; ) {
      const next = [...new Set(level.flatMap(membersOf))].filter((member) => !removed.has(member) && !usedElsewhere(member));
      for (const member of next) removed.add(member);
      level = next;
    }
    return [...removed];
  }

  /**
   * Refuses new operations and unloads every model within one exit timeout: operations
   * under way may finish and requests drain until the deadline, then what is open fails
   * and each version is finalized once its executions return (see ServedModelVersion.unload).
   * Resolves when every version is finalized. A load still running at the deadline (a
   * stuck backend) is left behind rather than holding shutdown forever.
   */
  async stop(): Promise<void> {
    this.closed = true;
    this.stopDeadline = performance.now() + this.options.exitTimeoutMs;
    await withTimeout(Promise.all([...this.models.values()].map((model) => model.queue)), this.options.exitTimeoutMs);
    // Not queued: a stuck operation must not keep the versions it is not touching from unloading.
    for (const model of this.models.values()) void this.retireAll(model);
    await Promise.all([...this.retiring]);
  }

  private async loadNow(model: ManagedModel, source: ModelSource, override?: ConfigOverride): Promise<void> {
    let prepared;
    try {
      // Auto-complete may start a backend's process (a Python stub): it waits for a slot too.
      prepared = await this.slots.run(() => this.resolveWithAgents(source, override));
    } catch (error) {
      const failure = InferenceError.from(error, 'UNAVAILABLE');
      this.recordModelFailure(model, failure);
      throw this.pollFailure(source.name, failure);
    }
    const { resolved, agents } = prepared;
    if (resolved.config.ensemble_scheduling) {
      try {
        // Without a slot: the members' loads may need them all.
        await this.checkEnsemble(source.name, resolved.config);
      } catch (error) {
        await agents.fail();
        const failure = InferenceError.from(error, 'UNAVAILABLE');
        this.recordModelFailure(model, failure);
        throw new InferenceError('INVALID_ARG', `load failed for model '${source.name}': ${failure.message}`, { cause: error });
      }
    }
    for (const files of resolved.versions) {
      if (!model.serving.has(files.version)) model.states.set(files.version, 'LOADING', '');
    }
    const loaded = await Promise.allSettled(
      resolved.versions.map((files) => {
        const turn = this.slots.turn();
        const server = lendingServer(this.options.server, turn);
        const context = { ...files, name: source.name, config: resolved.config, server, logger: this.options.logger };
        const observer = this.options.observerFor?.(source.name, files.version);
        const load = () => ServedModelVersion.load(resolved.backend, context, { maxInstances: this.options.maxInstancesPerModel, log: this.options.logger, server: this.options.server, observer, rateLimiter: this.options.rateLimiter });
        return turn.run(() =>
          withLoadRetries(this.loadRetryCount, load, (error, attempt) =>
            this.options.logger.error(`failed to load '${source.name}' version ${files.version} (attempt ${attempt} of ${this.loadRetryCount + 1}, trying again): ${InferenceError.from(error).message}`),
          ),
        );
      }),
    );
    const failures = loaded.flatMap((result, i) =>
      result.status === 'rejected' ? [{ version: resolved.versions[i]!.version, error: InferenceError.from(result.reason, 'UNAVAILABLE') }] : [],
    );
    const next = new Map(loaded.flatMap((result) => (result.status === 'fulfilled' ? [[result.value.version, result.value] as const] : [])));
    if (failures.length > 0 || this.closed) {
      await Promise.all([...next.values()].map((served) => served.unload(this.drainDeadline(), this.options.exitTimeoutMs)));
      await agents.fail();
      for (const { version, error } of failures) this.recordVersionFailure(model, version, error);
      for (const version of next.keys()) {
        if (!model.serving.has(version)) model.states.set(version, 'UNAVAILABLE', 'another version of the model failed to load');
      }
      if (this.closed) throw stopping(source.name);
      const states = failures.map(({ version, error }) => `version ${version} is at UNAVAILABLE state: ${error.message};`);
      throw new InferenceError('INVALID_ARG', `load failed for model '${source.name}': ${states.join('')}`, { cause: failures[0]!.error });
    }

    const cache = this.cacheFor(source.name, resolved.config);
    for (const served of next.values()) served.cache = cache;
    const previous = model.serving;
    const previousDirectory = model.removeDirectory;
    const previousAgents = model.agents;
    model.serving = next;
    model.removeDirectory = source.removeDirectory;
    model.agents = agents;
    void agents.complete();
    void previousAgents?.unload();
    model.latest = highest(next);
    model.states.keepOnly(new Set([...next.keys(), ...resolved.missingVersions, ...previous.keys()]));
    // Read when asked: a backend's description may change while the version serves (an ONNX model's thread choice).
    for (const [version, served] of next) model.states.set(version, 'READY', () => served.description ?? '', previous.has(version));
    // Retiring first, so that a serving version the policy still names but whose directory is gone ends UNAVAILABLE with that reason.
    void this.removeAfter([...previous].map(([version, served]) => this.retire(model, served, !next.has(version))), afterRetired(previousAgents, previousDirectory));
    for (const version of resolved.missingVersions) {
      model.states.set(version, 'UNAVAILABLE', `version ${version} is named by the version policy but has no directory`);
    }
  }

  /**
   * The load's config, the repository agents it names run on the model (as Triton's, before
   * the config is completed: they may move the model), then the model resolved where they
   * left it. A failure after the agents ran tells them.
   */
  private async resolveWithAgents(source: ModelSource, override: ConfigOverride | undefined): Promise<{ resolved: ResolvedModel; agents: RepositoryAgentChain }> {
    const config = await readConfig(source, override);
    const agents = await RepositoryAgentChain.start(this.agents, source, config, this.options.logger);
    try {
      return { resolved: await resolveModel(agents.source, config, this.registry, { maxInstancesPerModel: this.options.maxInstancesPerModel }), agents };
    } catch (error) {
      await agents.fail();
      throw error;
    }
  }

  /** Triton's answer when a model or its config cannot be read (its log line too), with the reason after. */
  private pollFailure(name: string, failure: InferenceError): InferenceError {
    this.options.logger.error(`Poll failed for model directory '${name}': ${failure.message}`);
    return new InferenceError('INTERNAL', `failed to load '${name}', failed to poll from model repository: ${failure.message}`, { cause: failure });
  }

  /** A failure before versions were chosen: versions still serving keep READY and show it; with none serving, the model is UNAVAILABLE. */
  private recordModelFailure(model: ManagedModel, failure: InferenceError): void {
    if (model.serving.size === 0) model.states.fail(failure.message);
    for (const version of model.serving.keys()) this.keepServing(model, version, failure);
  }

  /** A version that failed to load: it keeps READY if an earlier load still serves it. */
  private recordVersionFailure(model: ManagedModel, version: number, failure: InferenceError): void {
    if (model.serving.has(version)) this.keepServing(model, version, failure);
    else model.states.set(version, 'UNAVAILABLE', failure.message);
  }

  private keepServing(model: ManagedModel, version: number, failure: InferenceError): void {
    model.states.set(version, 'READY', `reload failed, previous load still serving: ${failure.message}`);
  }

  private async retireAll(model: ManagedModel): Promise<void> {
    const versions = [...model.serving.values()];
    const removeDirectory = model.removeDirectory;
    const agents = model.agents;
    model.serving = new Map();
    model.latest = undefined;
    model.removeDirectory = undefined;
    model.agents = undefined;
    // Not awaited: stop() must find the retirements registered at once. The chain runs unload before unload_complete.
    void agents?.unload();
    await this.removeAfter(versions.map((served) => this.retire(model, served, true)), afterRetired(agents, removeDirectory));
  }

  /**
   * Once `retirements` settle, removes the directory those versions were loaded from when
   * it was written for their load: a backend may read its files until it is finalized.
   * stop() waits for the removal too. Never rejects.
   */
  private removeAfter(retirements: readonly Promise<void>[], removeDirectory: (() => Promise<void>) | undefined): Promise<void> {
    const retired = Promise.all(retirements).then(() => {});
    if (!removeDirectory) return retired;
    const removal: Promise<void> = retired.then(() => this.removeWritten(removeDirectory)).finally(() => this.retiring.delete(removal));
    this.retiring.add(removal);
    return removal;
  }

  /** Removes a directory written for a load; one that cannot be removed is only warned of. */
  private async removeWritten(removeDirectory: (() => Promise<void>) | undefined): Promise<void> {
    await removeDirectory?.().catch((error: unknown) => emitTritiumWarning('TRITIUM_W004', `cannot remove a model directory written for a load: ${InferenceError.from(error).message}`));
  }

  /** Drains and finalizes a version that no longer serves; `gone` when nothing replaces it. Never rejects. */
  private retire(model: ManagedModel, served: ServedModelVersion, gone: boolean): Promise<void> {
    if (gone) {
      model.states.set(served.version, 'UNLOADING', '');
      model.draining.add(served);
    }
    const retirement = served
      .unload(this.drainDeadline(), this.options.exitTimeoutMs)
      .catch(() => {})
      .then(() => {
        this.retiring.delete(retirement);
        model.draining.delete(served);
        // Unless a later load or the version policy has given the version another state meanwhile.
        if (gone && model.states.get(served.version)?.state === 'UNLOADING') model.states.set(served.version, 'UNAVAILABLE', 'unloaded');
      });
    this.retiring.add(retirement);
    return retirement;
  }

  /** Requests drain for one exit timeout, or until stop()'s deadline once it has begun. */
  private drainDeadline(): number {
    return this.stopDeadline ?? performance.now() + this.options.exitTimeoutMs;
  }

  private enqueue(name: string, work: (model: ManagedModel) => Promise<void>): Promise<void> {
    if (this.closed) return Promise.reject(stopping(name));
    let model = this.models.get(name);
    if (!model) {
      model = { name, serving: new Map(), latest: undefined, draining: new Set(), states: new ModelStates(name, this.options.onStateChange), queue: Promise.resolve(), pending: 0, removeDirectory: undefined, agents: undefined };
      this.models.set(name, model);
    }
    model.pending++;
    // An operation whose turn comes after stop() began does not run: stop() unloads everything itself.
    const run = model.queue.then(() => (this.closed ? Promise.reject(stopping(name)) : work(model))).finally(() => model.pending--);
    model.queue = run.catch(() => {});
    return run;
  }

  /** Removes a model's record, unless another operation is queued on it: that one must find the record in place. */
  private drop(model: ManagedModel): void {
    if (model.pending === 1) this.models.delete(model.name);
  }
}

/** Index order: by model name, then version (a model-level entry first). */
export function byNameThenVersion(a: ModelIndexEntry, b: ModelIndexEntry): number {
  return a.name.localeCompare(b.name) || (a.version ?? -1) - (b.version ?? -1);
}

/** What runs once retired versions are finalized: their agents hear unload_complete, then a directory written for their load goes. */
function afterRetired(agents: RepositoryAgentChain | undefined, removeDirectory: (() => Promise<void>) | undefined): (() => Promise<void>) | undefined {
  if (!agents) return removeDirectory;
  return async () => {
    await agents.unloadComplete();
    await removeDirectory?.();
  };
}

function highest(versions: ReadonlyMap<number, ServedModelVersion>): ServedModelVersion | undefined {
  let best: ServedModelVersion | undefined;
  for (const served of versions.values()) if (!best || served.version > best.version) best = served;
  return best;
}

/** `: <reason>` of a state that has one. */
function because(state: { readonly reason: string } | undefined): string {
  return state?.reason ? `: ${state.reason}` : '';
}

function stopping(name: string): InferenceError {
  return new InferenceError('UNAVAILABLE', `model '${name}': the server is stopping`);
}
