import { EventEmitter } from 'eventemitter3';
import { RateLimiter, type RateLimitOptions } from './scheduling/rate-limiter.js';
import { BackendRegistry } from './backend/registry.js';
import type { ResponseCache } from './cache/response-cache.js';
import { responseCacheFor } from './cache/response-cache-for.js';
import { ServerMetrics } from './observability/metrics.js';
import { publishRefusal } from './observability/request-publishing.js';
import type { LogSettings } from './observability/log-settings.js';
import { openTelemetrySdkFor, type OpenTelemetrySdk } from './observability/open-telemetry-sdk.js';
import { ServerTracing } from './observability/server-tracing.js';
import type { TraceSettingChanges, TraceSettings } from './observability/trace-settings.js';
import { serverLoggerOf, type ServerLogger } from './observability/server-logger.js';
import type { NormalizedModelConfig } from './config/schema.js';
import type { InferRequest, InferResponse, RunningInference } from './contract/inference.js';
import type { LoadModelOptions, ModelServer, UnloadModelOptions } from './contract/model-server.js';
import { DEFAULT_MAX_INSTANCES_PER_MODEL } from './config/instance-limit.js';
import { InferenceError } from './errors.js';
import { emitTritiumWarning } from './warnings.js';
import { ModelManager } from './model/model-manager.js';
import { RepositoryAgentRegistry } from './repository-agents/agent-registry.js';
import type { ModelFacts } from './model/model-facts.js';
import { modelMetadataOf, serverMetadata } from './model/model-metadata.js';
import { outputLabels } from './model/output-labels.js';
import { requestedVersion } from './model/request-validator.js';
import type { ServedModelVersion } from './model/served-model-version.js';
import type { ModelStatistics } from './observability/statistics.js';
import { ModelRepository } from './repository/model-repository.js';
import { RepositorySync } from './repository/repository-sync.js';
import type { InferenceRequest } from './scheduling/inference-request.js';
import { PromiseSink, StreamSink } from './scheduling/response-sinks.js';
import type { ModelControlMode, ModelIndexEntry, ModelMetadata, ServerEvents, ServerMetadata, ServerOptions } from './types.js';

const CONTROL_MODES: readonly ModelControlMode[] = ['none', 'poll', 'explicit'];
/** Triton's default --model-load-thread-count. */
const DEFAULT_LOAD_THREAD_COUNT = 4;

/**
 * The embedded inference server: reads a Triton-style model repository, loads models
 * into backends and answers requests in-process. Emits `modelStateChanged`.
 */
export class InferenceServer extends EventEmitter<ServerEvents> implements ModelServer {
  private stopping: Promise<void> | undefined;
  private readonly manager: ModelManager;
  private readonly serverMetrics: ServerMetrics | undefined;
  /** The repository side: start-up loading, polling, the index, where explicit loads find models. */
  private readonly repository: RepositorySync;
  private readonly tracing: ServerTracing;

  private constructor(
    private readonly options: ServerOptions,
    private readonly mode: ModelControlMode,
    repository: ModelRepository,
    private readonly registry: BackendRegistry,
    private readonly responseCache: ResponseCache | undefined,
    private readonly log: ServerLogger,
    openTelemetry: OpenTelemetrySdk | undefined,
  ) {
    super();
    // First: they may refuse their options before the server registers anything (metrics, trace subscriptions).
    const rateLimiter = rateLimiterFor(options.rateLimit);
    const repositoryAgents = new RepositoryAgentRegistry(options.repositoryAgents);
    this.tracing = new ServerTracing(this, options.trace, openTelemetry);
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
      logger: log,
      maxInstancesPerModel: options.maxInstancesPerModel ?? DEFAULT_MAX_INSTANCES_PER_MODEL,
      loadThreadCount: options.modelLoadThreadCount ?? DEFAULT_LOAD_THREAD_COUNT,
      rateLimiter,
      repositoryAgents,
      loadRetryCount: options.modelLoadRetryCount ?? 0,
    });
    this.repository = new RepositorySync(repository, this.manager, {
      mode,
      startupModels: options.startupModels,
      continueOnLoadError: options.continueOnLoadError,
      pollIntervalMs: options.pollIntervalMs,
      onPollFailure: (error) => this.notify('repositoryError', error),
    });
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
    const retries = options.modelLoadRetryCount;
    if (retries !== undefined && (!Number.isSafeInteger(retries) || retries < 0)) {
      throw new InferenceError('INVALID_ARG', `\`modelLoadRetryCount\` must be a non-negative integer, got ${String(retries)}`);
    }
    if (options.strictReadiness !== undefined && typeof options.strictReadiness !== 'boolean') {
      throw new InferenceError('INVALID_ARG', `\`strictReadiness\` must be a boolean, got ${typeof options.strictReadiness}`);
    }
    if (options.serverId !== undefined && typeof options.serverId !== 'string') {
      throw new InferenceError('INVALID_ARG', `\`serverId\` must be a string, got ${typeof options.serverId}`);
    }
    const repository = new ModelRepository(paths, { configName: options.modelConfigName, objectStorage: options.objectStorage });
    const registry = new BackendRegistry(options.backends ?? [], options.backendSettings);
    // Before the server registers anything (metrics): it may refuse its options.
    const log = serverLoggerOf(options.logger);
    // Loaded only for trace mode 'opentelemetry': its packages are optional.
    const openTelemetry = await openTelemetrySdkFor(options.trace);
    const cache = await responseCacheFor(options.responseCache, log);
    let server: InferenceServer;
    try {
      server = new InferenceServer(options, mode, repository, registry, cache, log, openTelemetry);
    } catch (error) {
      await cache?.close();
      throw error;
    }
    try {
      await server.repository.loadAtStartup();
    } catch (error) {
      await server.stop().catch(() => {});
      throw error;
    }
    server.repository.start();
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
    let version: number | undefined;
    try {
      const served = this.admit(modelName, request);
      version = served.version;
      if (served.decoupled) {
        throw new InferenceError('UNSUPPORTED', `model '${modelName}' is decoupled (zero or more responses per request): use inferStream()`);
      }
      const validated = served.validator.validate(request);
      return new Promise((resolve, reject) => {
        const accepted = served.submit(validated, new PromiseSink({ id: validated.id, modelName, modelVersion: served.version }, resolve, reject));
        running?.accepted(accepted);
      });
    } catch (error) {
      publishRefusal(this, modelName, version, request, error);
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
    let version: number | undefined;
    try {
      const served = this.admit(modelName, request);
      version = served.version;
      const validated = served.validator.validate(request);
      const sink = new StreamSink({ id: validated.id, modelName, modelVersion: served.version });
      // Streams do not use the response cache (yet): see docs/response-cache.md.
      return streamOf(served.submit(validated, sink, { bypassCache: true }), sink);
    } catch (error) {
      publishRefusal(this, modelName, version, request, error);
      throw error;
    }
  }

  /**
   * Explicit mode: loads (or reloads) a model, optionally with a config that replaces
   * config.pbtxt, or with its files and config sent along (Triton's model file override:
   * then the repository is not read). Fails with Triton's texts (see ModelManager.load).
   */
  async loadModel(name: string, options: LoadModelOptions = {}): Promise<void> {
    this.assertRunning();
    this.assertExplicit();
    await this.manager.load(name, this.repository.locate(name, options), options.config);
  }

  /**
   * Explicit mode: unloads a model once its in-flight requests finish (up to exitTimeoutMs);
   * one not loaded is left as it is, as in Triton. `unloadDependents` takes an ensemble's
   * models with it (see UnloadModelOptions).
   */
  async unloadModel(name: string, options: UnloadModelOptions = {}): Promise<void> {
    this.assertRunning();
    this.assertExplicit();
    const dependents: unknown = options?.unloadDependents;
    if (dependents !== undefined && typeof dependents !== 'boolean') {
      throw new InferenceError('INVALID_ARG', `\`unloadDependents\` must be a boolean, got ${JSON.stringify(dependents)?.slice(0, 100)}`);
    }
    await this.manager.unload(name, dependents === true);
  }

  /** Poll mode: rescans the repository now instead of waiting for the next poll. */
  async pollRepository(): Promise<void> {
    await this.repository.pollNow();
  }

  isLive(): boolean {
    return !this.stopping;
  }

  /** Ready when running and (unless strictReadiness is false) every model it was asked to load has a ready version. */
  isReady(): boolean {
    if (this.options.strictReadiness === false) return !this.stopping;
    return !this.stopping && this.manager.index().every((entry) => entry.state === 'READY' || entry.reason === 'unloaded');
  }

  async isModelReady(name: string, version?: number): Promise<boolean> {
    return !this.stopping && (await this.manager.isReady(name, version));
  }

  metadata(): ServerMetadata {
    return serverMetadata(this.options.serverId);
  }

  async modelMetadata(name: string, version?: number): Promise<ModelMetadata> {
    return modelMetadataOf(name, this.manager.serving(name, version), this.manager.servedVersions(name));
  }

  /** The config a model version runs with, after auto-complete and normalization. */
  async modelConfig(name: string, version?: number): Promise<NormalizedModelConfig> {
    return structuredClone(this.manager.serving(name, version).context.config);
  }

  /**
   * What a request needs of a model version (decoupled, max_batch_size, inputs, ...),
   * frozen when it loaded: no copy per call, unlike modelConfig(). Throws as modelConfig()
   * rejects for a model or version it does not serve.
   */
  modelFacts(name: string, version?: number): ModelFacts {
    return this.manager.serving(name, version).facts;
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
    return this.repository.index(this.manager.index());
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

  /** The log settings now (Triton's logging extension, GET /v2/logging). */
  logSettings(): LogSettings {
    return this.log.settings;
  }

  /**
   * Changes the log settings given, at once for every message after (a Python model's
   * among them), and answers them all. A bad value or an unknown field is INVALID_ARG
   * naming it, and nothing changes; `log_file` is UNSUPPORTED, as in Triton.
   */
  updateLogSettings(changes: Partial<LogSettings>): LogSettings {
    return this.log.update(changes);
  }

  /** The trace settings in force for `model` (its own, falling back to the global ones field by field), or the global ones. */
  traceSettings(model?: string): TraceSettings {
    if (model !== undefined) this.assertTraceModel(model);
    return this.tracing.settings(model);
  }

  /**
   * Changes the global trace settings, or `model`'s own (null clears one: the global value
   * applies again), and answers the settings in force. An unknown setting or a bad value is
   * INVALID_ARG naming it, as is a change that leaves tracing on with no file or a rate of
   * 0; nothing changes then. Tracing observes requests only while some setting's level is
   * not OFF.
   */
  updateTraceSettings(changes: TraceSettingChanges, model?: string): TraceSettings {
    if (model !== undefined) this.assertTraceModel(model);
    return this.tracing.update(changes, model);
  }

  /** As Triton: trace settings are per model, for a model that is ready. */
  private assertTraceModel(model: string): void {
    try {
      this.manager.serving(model);
    } catch {
      throw new InferenceError('INVALID_ARG', `Request for unknown model : ${model}`);
    }
  }

  /**
   * Stops taking requests, drains in-flight work (up to exitTimeoutMs, then fails it
   * with UNAVAILABLE), waits for running executions, finalizes instances, models and
   * backends in that order, and resolves last.
   */
  stop(): Promise<void> {
    if (this.stopping) return this.stopping;
    this.stopping = (async () => {
      this.repository.stop();
      await this.manager.stop();
      await this.repository.close();
      await this.tracing.close();
      await this.registry.finalize();
      await this.responseCache?.close();
      this.serverMetrics?.close();
    })();
    // Once `stopping` is set, so that listeners read the server as not live and not ready.
    this.notify('stopping');
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
      emitTritiumWarning('TRITIUM_W001', `a ${event} listener threw: ${String(error)}`);
    }
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

/** The server's rate limiter: none when off (the default), as in Triton. */
function rateLimiterFor(options: RateLimitOptions | undefined): RateLimiter | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null) throw new InferenceError('INVALID_ARG', `\`rateLimit\` must be an object, got ${typeof options}`);
  const mode = options.mode ?? 'off';
  if (mode !== 'off' && mode !== 'execution_count') throw new InferenceError('INVALID_ARG', `\`rateLimit.mode\` must be 'off' or 'execution_count', got ${JSON.stringify(mode)}`);
  if (options.resources !== undefined && !Array.isArray(options.resources)) throw new InferenceError('INVALID_ARG', '`rateLimit.resources` must be an array of { name, count, device? }');
  // Made even when off: explicit resources are refused the same way in either mode.
  const limiter = new RateLimiter(options.resources);
  return mode === 'execution_count' ? limiter : undefined;
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
