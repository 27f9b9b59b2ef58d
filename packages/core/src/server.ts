import { EventEmitter } from 'eventemitter3';
import { BackendRegistry } from './backend/registry.js';
import { consoleLogger } from './console-logger.js';
import { cacheKey } from './cache/cache-key.js';
import { LocalCache } from './cache/local-cache.js';
import { RedisCache } from './cache/redis-cache.js';
import type { ResponseCache, ResponseCacheOptions } from './cache/response-cache.js';
import { decodeTensors, encodeTensors } from './cache/tensor-codec.js';
import { ServerMetrics } from './observability/metrics.js';
import type { NormalizedModelConfig } from './config/schema.js';
import type { InferRequest, InferResponse, RunningInference } from './contract/inference.js';
import type { Logger } from './contract/logger.js';
import type { LoadModelOptions, ModelServer } from './contract/model-server.js';
import { DEFAULT_MAX_INSTANCES_PER_MODEL } from './config/instance-limit.js';
import { requestShape } from './config/request-shape.js';
import { InferenceError } from './errors.js';
import { byNameThenVersion, ModelManager } from './model/model-manager.js';
import { outputLabels } from './model/output-labels.js';
import { requestedVersion } from './model/request-validator.js';
import type { ServedModelVersion } from './model/served-model-version.js';
import type { ModelStatistics } from './observability/statistics.js';
import { ModelChangeTracker } from './repository/model-change-tracker.js';
import { writeModelFiles } from './repository/model-file-override.js';
import { ModelRepository, type ModelSource, type RepositoryScan } from './repository/model-repository.js';
import { RepositoryPoller } from './repository/repository-poller.js';
import type { InferenceRequest, ValidatedRequest } from './scheduling/inference-request.js';
import { PromiseSink, StreamSink } from './scheduling/response-sinks.js';
import { dataTypeFromConfig } from './tensor/datatype.js';
import type { Tensor } from './tensor/tensor.js';
import type {
  ModelControlMode,
  ModelIndexEntry,
  ModelMetadata,
  ServerEvents,
  ServerMetadata,
  ServerOptions,
  TensorMetadata,
} from './types.js';
import { VERSION } from './version.js';

const CONTROL_MODES: readonly ModelControlMode[] = ['none', 'poll', 'explicit'];
/** Triton's defaults: its server id, which clients check, and --model-load-thread-count. */
const DEFAULT_SERVER_ID = 'triton';
const DEFAULT_LOAD_THREAD_COUNT = 4;

/**
 * The embedded inference server: reads a Triton-style model repository, loads models
 * into backends and answers requests in-process. Emits `modelStateChanged`.
 */
export class InferenceServer extends EventEmitter<ServerEvents> implements ModelServer {
  private stopping: Promise<void> | undefined;
  private readonly manager: ModelManager;
  private readonly serverMetrics: ServerMetrics | undefined;
  private readonly responseCache: ResponseCache | undefined;
  private readonly poller: RepositoryPoller | undefined;
  /** Poll mode: what each model's last load read, to tell which models changed. */
  private readonly changes: ModelChangeTracker | undefined;

  private constructor(
    private readonly options: ServerOptions,
    private readonly mode: ModelControlMode,
    private readonly repository: ModelRepository,
    private readonly registry: BackendRegistry,
  ) {
    super();
    // First: it may refuse its options, and then nothing else may have been registered.
    this.responseCache = responseCacheFor(options.responseCache, options.logger ?? consoleLogger);
    const metrics = (this.serverMetrics =
      options.metrics === false
        ? undefined
        : new ServerMetrics(options.metrics ?? {}, { servedVersions: () => this.manager.servedVersions(), backends: () => registry.initializedBackends() }));
    this.manager = new ModelManager(registry, {
      responseCache: this.responseCache,
      observerFor: metrics && ((model, version) => metrics.observerFor(model, version)),
      exitTimeoutMs: options.exitTimeoutMs ?? 30_000,
      onStateChange: (entry) => this.notify('modelStateChanged', entry),
      server: this,
      logger: options.logger ?? consoleLogger,
      maxInstancesPerModel: options.maxInstancesPerModel ?? DEFAULT_MAX_INSTANCES_PER_MODEL,
      loadThreadCount: options.modelLoadThreadCount ?? DEFAULT_LOAD_THREAD_COUNT,
    });
    if (mode === 'poll') {
      const changes = (this.changes = new ModelChangeTracker());
      this.poller = new RepositoryPoller(
        options.pollIntervalMs ?? 15_000,
        () => this.syncRepository(changes),
        (error) => this.repositoryFailed(error),
      );
    }
  }

  /** Starts a server and loads its models as the control mode says. */
  static async start(options: ServerOptions): Promise<InferenceServer> {
    const paths = typeof options?.modelRepository === 'string' ? [options.modelRepository] : options?.modelRepository;
    if (!Array.isArray(paths) || paths.length === 0 || paths.some((p) => typeof p !== 'string')) {
      throw new InferenceError('INVALID_ARG', '`modelRepository` must be a directory path or a non-empty array of them');
    }
    const mode = options.modelControlMode ?? 'none';
    if (!CONTROL_MODES.includes(mode)) {
      throw new InferenceError('INVALID_ARG', `\`modelControlMode\` must be one of ${CONTROL_MODES.join(', ')}, got '${String(mode)}'`);
    }
    if (options.startupModels && mode !== 'explicit') {
      throw new InferenceError('INVALID_ARG', '`startupModels` applies only to modelControlMode "explicit"');
    }
    checkDuration('pollIntervalMs', options.pollIntervalMs);
    checkDuration('exitTimeoutMs', options.exitTimeoutMs);
    const maxInstances = options.maxInstancesPerModel;
    if (maxInstances !== undefined && (!Number.isSafeInteger(maxInstances) || maxInstances < 1)) {
      throw new InferenceError('INVALID_ARG', `\`maxInstancesPerModel\` must be a positive integer, got ${String(maxInstances)}`);
    }
    const loadThreads = options.modelLoadThreadCount;
    if (loadThreads !== undefined && (!Number.isSafeInteger(loadThreads) || loadThreads < 0)) {
      throw new InferenceError('INVALID_ARG', `\`modelLoadThreadCount\` must be a non-negative integer, got ${String(loadThreads)}`);
    }
    if (options.serverId !== undefined && typeof options.serverId !== 'string') {
      throw new InferenceError('INVALID_ARG', `\`serverId\` must be a string, got ${typeof options.serverId}`);
    }
    const repository = new ModelRepository(paths, { configName: options.modelConfigName });
    const server = new InferenceServer(options, mode, repository, new BackendRegistry(options.backends ?? []));
    try {
      await server.loadAtStartup();
    } catch (error) {
      await server.stop().catch(() => {});
      throw error;
    }
    server.poller?.start();
    return server;
  }

  /** Runs one inference and resolves with its response. */
  infer(modelName: string, request: InferRequest): Promise<InferResponse> {
    return this.begin(modelName, request, undefined);
  }

  /**
   * Starts one inference as infer() does, and gives its response with a cancel() that
   * fails it with CANCELLED at once: cheaper than an AbortSignal (a few microseconds each)
   * for a caller that starts many, such as an ensemble's steps.
   */
  startInference(modelName: string, request: InferRequest): RunningInference {
    const running = new CancellableStart();
    running.response = this.begin(modelName, request, running);
    return running;
  }

  /** infer() and startInference(): `running`, when given, hears of the accepted request so it can cancel it. */
  private begin(modelName: string, request: InferRequest, running: CancellableStart | undefined): Promise<InferResponse> {
    try {
      const served = this.admit(modelName, request);
      if (served.decoupled) {
        throw new InferenceError('UNSUPPORTED', `model '${modelName}' is decoupled (zero or more responses per request): use inferStream()`);
      }
      const validated = served.validator.validate(request);
      return served.cache ? this.inferCached(served, served.cache, validated, modelName, running) : this.submit(served, validated, modelName, running);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Runs one inference and yields each response as it comes: zero or more for a
   * decoupled model, exactly one otherwise. The request is checked and queued at once,
   * as with infer(); a refusal surfaces at the first iteration. Leaving the loop early
   * cancels the request.
   */
  inferStream(modelName: string, request: InferRequest): AsyncGenerator<InferResponse, void, undefined> {
    try {
      return this.startStream(modelName, request);
    } catch (error) {
      return refused(error);
    }
  }

  /**
   * inferStream(), but a refusal (no such model, an invalid request, a full queue) throws
   * here rather than at the first iteration, so that a caller can tell it from the
   * model's own errors (Triton's /generate_stream answers the one as JSON, the other as
   * an event).
   */
  startStream(modelName: string, request: InferRequest): AsyncGenerator<InferResponse, void, undefined> {
    const served = this.admit(modelName, request);
    const validated = served.validator.validate(request);
    const sink = new StreamSink({ id: validated.id, modelName, modelVersion: served.version });
    return streamOf(served.submit(validated, sink), sink);
  }

  private submit(served: ServedModelVersion, validated: ValidatedRequest, modelName: string, running: CancellableStart | undefined): Promise<InferResponse> {
    return new Promise((resolve, reject) => {
      const accepted = served.submit(validated, new PromiseSink({ id: validated.id, modelName, modelVersion: served.version }, resolve, reject));
      running?.accepted(accepted);
    });
  }

  /**
   * Answers from the response cache when it holds the request's key; otherwise runs the
   * request and keeps a copy of a successful response (the copy is made before answering;
   * the caller does not wait for the insertion itself).
   */
  private async inferCached(served: ServedModelVersion, cache: ResponseCache, validated: ValidatedRequest, modelName: string, running: CancellableStart | undefined): Promise<InferResponse> {
    const start = performance.now();
    const key = cacheKey(modelName, served.version, validated.inputs, validated.requestedOutputs);
    const hit = await cache.get(key);
    // An entry that does not decode (written by something else into a shared Redis) is a miss, not a failure.
    const outputs = hit && decodeOrUndefined(hit);
    if (outputs) {
      served.statistics.recordCacheHit(start, performance.now());
      return { id: validated.id, modelName, modelVersion: served.version, outputs };
    }
    const lookup = performance.now() - start;
    // The version may have been unloaded (or the server stopped) during the lookup: it must not take the request then.
    this.assertRunning();
    if (!this.manager.servedVersions(modelName).includes(served)) {
      throw new InferenceError('UNAVAILABLE', `model '${modelName}' version ${served.version} was unloaded while the request looked in the response cache`);
    }
    const response = await this.submit(served, validated, modelName, running);
    const inserting = performance.now();
    void cache.set(key, encodeTensors(response.outputs)).then(() => served.statistics.recordCacheMiss(lookup + performance.now() - inserting));
    return response;
  }

  /**
   * Explicit mode: loads (or reloads) a model, optionally with a config that replaces
   * config.pbtxt, or with its files and config sent along (Triton's model file override:
   * then the repository is not read). Fails with Triton's texts (see ModelManager.load).
   */
  async loadModel(name: string, options: LoadModelOptions = {}): Promise<void> {
    this.assertRunning();
    this.assertExplicit();
    const { config, files } = options;
    const locate = files && Object.keys(files).length > 0 ? () => writeModelFiles(name, files, config !== undefined) : () => this.repository.find(name);
    await this.manager.load(name, locate, config);
  }

  /** Explicit mode: unloads a model once its in-flight requests finish (up to exitTimeoutMs); one not loaded is left as it is, as in Triton. */
  async unloadModel(name: string): Promise<void> {
    this.assertRunning();
    this.assertExplicit();
    await this.manager.unload(name);
  }

  /** Poll mode: rescans the repository now instead of waiting for the next poll. */
  async pollRepository(): Promise<void> {
    if (!this.poller) throw new InferenceError('UNSUPPORTED', 'pollRepository() needs modelControlMode "poll"');
    await this.poller.pollNow();
  }

  isLive(): boolean {
    return !this.stopping;
  }

  /** Ready when running and every model it was asked to load has a ready version. */
  isReady(): boolean {
    return !this.stopping && this.manager.index().every((entry) => entry.state === 'READY' || entry.reason === 'unloaded');
  }

  async isModelReady(name: string, version?: number): Promise<boolean> {
    return !this.stopping && (await this.manager.isReady(name, version));
  }

  metadata(): ServerMetadata {
    return { name: this.options.serverId ?? DEFAULT_SERVER_ID, version: VERSION, extensions: ['model_configuration', 'model_repository', 'statistics'] };
  }

  async modelMetadata(name: string, version?: number): Promise<ModelMetadata> {
    const served = this.manager.serving(name, version);
    const config = served.context.config;
    const describe = (t: { name?: string; data_type?: string; dims?: readonly number[] }): TensorMetadata => ({
      name: t.name!,
      datatype: dataTypeFromConfig(t.data_type!),
      shape: requestShape(config, t),
    });
    return {
      name,
      versions: this.manager.servedVersions(name).map((s) => String(s.version)),
      platform: config.platform || config.backend || '',
      inputs: (config.input ?? []).map(describe),
      outputs: (config.output ?? []).map(describe),
    };
  }

  /** The config a model version runs with, after auto-complete and normalization. */
  async modelConfig(name: string, version?: number): Promise<NormalizedModelConfig> {
    return structuredClone(this.manager.serving(name, version).context.config);
  }

  /**
   * The class labels of an output (its config's `label_filename`, one per line), or
   * undefined when it has none: what Triton's classification extension reports.
   */
  async outputLabels(name: string, output: string, version?: number): Promise<readonly string[] | undefined> {
    return outputLabels(this.manager.serving(name, version), output);
  }

  /** Every model in the repositories with the state of each version; models never loaded show as UNAVAILABLE. */
  async repositoryIndex(): Promise<ModelIndexEntry[]> {
    const entries = this.manager.index();
    const managed = new Set(entries.map((entry) => entry.name));
    const scan = await this.repository.scan();
    for (const name of scan.models.keys()) {
      if (!managed.has(name)) entries.push({ name, version: undefined, state: 'UNAVAILABLE', reason: 'not loaded' });
    }
    return entries.sort(byNameThenVersion);
  }

  /** Per-version statistics in the shape of Triton's statistics extension. */
  statistics(name?: string, version?: number): { model_stats: ModelStatistics[] } {
    // Naming a model that serves nothing (or not that version) throws, as the other per-model calls do.
    if (name !== undefined) this.manager.serving(name, version);
    const served = this.manager.servedVersions(name).filter((s) => version === undefined || s.version === version);
    return { model_stats: served.map((s) => s.statistics.snapshot()) };
  }

  /** Prometheus text: Triton's nv_* metrics for every served version, host metrics, models' own metrics. */
  async metrics(): Promise<string> {
    if (!this.serverMetrics) throw new InferenceError('UNAVAILABLE', 'metrics are turned off (ServerOptions.metrics is false)');
    return this.serverMetrics.text();
  }

  /**
   * Stops taking requests, drains in-flight work (up to exitTimeoutMs, then fails it
   * with UNAVAILABLE), waits for running executions, finalizes instances, models and
   * backends in that order, and resolves last.
   */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      // A poll under way is not waited for: the stopping manager refuses what it would still start.
      this.poller?.stop();
      await this.manager.stop();
      await this.registry.finalize();
      await this.responseCache?.close();
      this.serverMetrics?.close();
    })();
    return this.stopping;
  }

  /**
   * The one admission check for new requests. While stopping it refuses them all but
   * requests that continue a live sequence, which the unloading version still takes
   * (new sequences are refused), as Triton does while exiting; likewise after a
   * sequence model is unloaded, until its sequences end.
   */
  private admit(modelName: string, request: InferRequest): ServedModelVersion {
    try {
      this.assertRunning();
      return this.manager.serving(modelName, requestedVersion(modelName, request));
    } catch (error) {
      const continuing = this.manager.continuing(modelName, request);
      if (continuing) return continuing;
      throw error;
    }
  }

  private assertRunning(): void {
    if (this.stopping) throw new InferenceError('UNAVAILABLE', 'the server is stopping');
  }

  /** Triton's refusal (in modes none and poll alike), then which mode this is. */
  private assertExplicit(): void {
    if (this.mode !== 'explicit') {
      throw new InferenceError(
        'UNAVAILABLE',
        `explicit model load / unload is not allowed if polling is enabled: the server runs in modelControlMode "${this.mode}"; loading and unloading need "explicit"`,
      );
    }
  }

  /** A listener that throws must not break a load, an unload or a poll: it is reported as a warning. */
  private notify<E extends keyof ServerEvents>(event: E, ...args: EventEmitter.EventArgs<ServerEvents, E>): void {
    try {
      this.emit(event, ...args);
    } catch (error) {
      process.emitWarning(`a ${event} listener threw: ${String(error)}`, 'TritiumWarning');
    }
  }

  /** Poll mode, the repository unreadable (a root gone, a disk unmounted): what is loaded keeps serving until a poll reads it again. */
  private repositoryFailed(error: unknown): void {
    const failure = InferenceError.from(error, 'UNAVAILABLE');
    process.emitWarning(`polling the model repository failed: ${failure.message}; loaded models keep serving`, 'TritiumWarning');
    this.notify('repositoryError', failure);
  }

  private async loadAtStartup(): Promise<void> {
    const scan = await this.repository.scan();
    const loadAll = this.mode !== 'explicit' || this.options.startupModels?.includes('*');
    const names = loadAll ? [...scan.models.keys(), ...scan.conflicts.keys()] : [...(this.options.startupModels ?? [])];
    const failures = await this.loadAll(scan, names);
    if (failures.length && this.options.continueOnLoadError === false) {
      throw new InferenceError('UNAVAILABLE', `models failed to load: ${failures.map((f) => f.message).join('; ')}`);
    }
  }

  /** Poll mode: loads new and changed models, unloads removed ones, refuses names found twice. */
  private async syncRepository(changes: ModelChangeTracker): Promise<void> {
    const scan = await this.repository.scan();
    const changed: string[] = [];
    for (const [name, source] of scan.models) {
      if (await changes.changed(name, source.directory)) changed.push(name);
    }
    await this.loadAll(scan, [...changed, ...scan.conflicts.keys()]);
    for (const name of this.manager.managedNames()) {
      if (scan.models.has(name) || scan.conflicts.has(name)) continue;
      // A model directory that comes back unchanged must load again.
      changes.forget(name);
      await this.manager.forget(name).catch(() => {});
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
    const load = () => this.manager.load(source.name, async () => source);
    return this.changes ? this.changes.track(source.name, source.directory, load) : load();
  }

  private refuse(name: string, reason: string): Promise<void> {
    // Once the name is served from one repository again, it loads even if that directory did not change.
    this.changes?.forget(name);
    return this.manager.refuse(name, reason);
  }
}

/** The longest delay setTimeout honours; past it, a timer fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Timer lengths must be finite and fit setTimeout (which fires at once past 2^31-1 ms). */
function checkDuration(field: string, value: number | undefined): void {
  if (value === undefined) return;
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > MAX_TIMER_MS) {
    throw new InferenceError('INVALID_ARG', `\`${field}\` must be a number of milliseconds from 0 to ${MAX_TIMER_MS}, got ${String(value)}`);
  }
}

function decodeOrUndefined(bytes: Uint8Array): Record<string, Tensor> | undefined {
  try {
    return decodeTensors(bytes);
  } catch {
    return undefined;
  }
}

/** The cache ServerOptions.responseCache asks for; none for a local cache of 0 bytes. */
function responseCacheFor(options: ResponseCacheOptions | undefined, logger: Logger): ResponseCache | undefined {
  if (!options) return undefined;
  if (options.type === 'redis') return new RedisCache(options, logger);
  if (options.type !== 'local' || !Number.isSafeInteger(options.sizeBytes) || options.sizeBytes < 0) {
    throw new InferenceError('INVALID_ARG', "`responseCache` must be { type: 'local', sizeBytes: <non-negative integer> } or { type: 'redis', ... }");
  }
  return options.sizeBytes > 0 ? new LocalCache(options.sizeBytes) : undefined;
}

/** A started inference: its response, and a cancel() that works before and after the request is accepted. */
class CancellableStart implements RunningInference {
  // Set by startInference() before it returns.
  response!: Promise<InferResponse>;
  private request: InferenceRequest | undefined;
  private cancelled = false;

  accepted(request: InferenceRequest): void {
    this.request = request;
    if (this.cancelled) this.cancel();
  }

  cancel(): void {
    this.cancelled = true;
    if (this.request && !this.request.response.isEnded) this.request.cancel(new InferenceError('CANCELLED', `${this.request.describe()}: cancelled by the caller`));
  }
}

async function* refused(error: unknown): AsyncGenerator<InferResponse, void, undefined> {
  throw error;
}

/** Yields a request's responses; a caller that stops reading early cancels the request. */
async function* streamOf(accepted: InferenceRequest, sink: StreamSink): AsyncGenerator<InferResponse, void, undefined> {
  try {
    yield* sink;
  } finally {
    if (!accepted.response.isEnded) {
      accepted.cancel(new InferenceError('CANCELLED', `${accepted.describe()}: the caller stopped reading the stream`));
    }
  }
}
