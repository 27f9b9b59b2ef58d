import { performance } from 'node:perf_hooks';
import type { Backend, BackendInstance, BackendModel, InstanceContext, ModelContext } from '../contract/backend.js';
import type { SequenceOptions } from '../contract/inference.js';
import { InferenceError } from '../errors.js';
import { emitTritiumWarning } from '../warnings.js';
import { submitCached, type CacheableVersion } from '../cache/cached-submit.js';
import type { ResponseCache } from '../cache/response-cache.js';
import { failureReason } from '../observability/failure-reason.js';
import { requestEndChannel, requestErrorChannel, requestQueueChannel } from '../observability/request-channels.js';
import { isObservingRequests } from '../observability/request-observers.js';
import { isHeard, publishEnd, publishQueue, publishStart } from '../observability/request-publishing.js';
import type { ServerLogger } from '../observability/server-logger.js';
import { ModelStatisticsRecorder, type LatencyObserver } from '../observability/statistics.js';
import { InferenceRequest, type ValidatedRequest } from '../scheduling/inference-request.js';
import { InstancePool } from '../scheduling/instance-pool.js';
import { LimitedInstance, type RateLimiter } from '../scheduling/rate-limiter.js';
import { InstanceRunner } from '../scheduling/instance-runner.js';
import { LiveSet } from '../scheduling/live-set.js';
import { ModelOutputs } from '../scheduling/model-outputs.js';
import type { ResponseSink } from '../scheduling/response-channel.js';
import { ResponseOrder } from '../scheduling/response-order.js';
import type { Scheduler } from '../scheduling/scheduler.js';
import { schedulerFor } from '../scheduling/scheduler-for.js';
import type { Tensor } from '../tensor/tensor.js';
import { modelFactsOf, type ModelFacts } from './model-facts.js';
import { modelInstances } from './model-instances.js';
import { warmUp, warmupSamples } from './model-warmup.js';
import { RequestValidator } from './request-validator.js';
import { runBounded } from './run-bounded.js';
import { withTimeout } from './with-timeout.js';

/**
 * How many instances of one version are created (and then warmed) at once: creating one
 * starts a process or a thread and loads the model, so a large instance group starts a
 * few at a time instead of all together.
 */
const INSTANCES_STARTED_AT_ONCE = 8;

/** What loading a version needs of the server. */
export interface VersionLoadOptions {
  /** The most instances the version may have (ServerOptions.maxInstancesPerModel). */
  readonly maxInstances: number;
  readonly log: ServerLogger;
  /** The InferenceServer: the request channels name it. */
  readonly server: object;
  /** Takes per-request latencies for metrics. */
  readonly observer?: LatencyObserver;
  /** The server's rate limiter, when its mode is execution_count. */
  readonly rateLimiter?: RateLimiter;
}

/**
 * One loaded model version: its backend model, instances, scheduler, the door check
 * built from its config, and its statistics. It tracks every accepted request until
 * its last response, so unloading can drain them.
 */
export class ServedModelVersion implements CacheableVersion {
  readonly validator: RequestValidator;
  private readonly outputs: ModelOutputs;
  /** Set when the config asks for responses in arrival order (preserve_ordering). */
  private readonly responseOrder: ResponseOrder | undefined;
  /** Requests answered from the response cache, with when their lookup began: they end as cache hits. */
  private readonly cacheHits = new Map<InferenceRequest, number>();
  private idleWaiters: Array<() => void> = [];
  private unloading = false;

  private constructor(
    readonly context: ModelContext,
    private readonly model: BackendModel,
    private readonly pool: InstancePool,
    readonly statistics: ModelStatisticsRecorder,
    /** What frontends read on every request, frozen at load (server.modelFacts()). */
    readonly facts: ModelFacts,
    private readonly scheduler: Scheduler,
    private readonly log: ServerLogger,
    /** The InferenceServer serving it (not the lending view its context holds): the request channels name it. */
    private readonly server: object,
    /** The version's requests in flight, which its context counts for the backend. */
    private readonly outstanding: LiveSet<InferenceRequest>,
  ) {
    this.validator = new RequestValidator(context.config);
    this.outputs = new ModelOutputs(context.config);
    const { dynamic_batching: dynamic, sequence_batching: sequence } = context.config;
    if (dynamic?.preserve_ordering || sequence?.oldest?.preserve_ordering) this.responseOrder = new ResponseOrder();
  }

  get version(): number {
    return this.context.version;
  }

  /** Answers zero or more responses per request (model_transaction_policy.decoupled). */
  get decoupled(): boolean {
    return this.facts.decoupled;
  }

  get description(): string | undefined {
    return this.model.description;
  }

  /** How long the load took, backend model, instances and warmup (Triton's nv_model_load_duration_secs). */
  loadDurationMs = 0;

  /** Set when the config enables response_cache and the server has a cache. */
  cache: ResponseCache | undefined;

  /**
   * Creates the backend model and every instance of every instance group (at most
   * `maxInstances`, a few at a time), under the server's rate limiter when it has one.
   * Each step is a verbose line of level 1 in `log`, each request two of level 2.
   */
  static async load(backend: Backend, given: Omit<ModelContext, 'requestsInFlight'>, options: VersionLoadOptions): Promise<ServedModelVersion> {
    const { maxInstances, log, server, observer, rateLimiter } = options;
    const outstanding = new LiveSet<InferenceRequest>();
    const context: ModelContext = { ...given, requestsInFlight: () => outstanding.size };
    const started = performance.now();
    const where = `model '${context.name}' version ${context.version}`;
    // Built first: a bad sample or too many instances fails the load before anything starts.
    const samples = await warmupSamples(context);
    const names = modelInstances(backend, context, maxInstances);
    log.verbose(`${where}: loading with backend '${backend.name}', instances ${names.map(describeInstance).join(', ')}`);
    const pool = new InstancePool(names.length);
    // Also before anything starts: resources the rate limiter cannot give refuse the load.
    if (rateLimiter) pool.limit(rateLimiter, limitedInstances(context, names, pool));
    let model: BackendModel;
    try {
      model = await backend.createModel(context);
    } catch (error) {
      pool.unlimit();
      throw InferenceError.from(error, 'UNAVAILABLE', where);
    }
    const statistics = new ModelStatisticsRecorder(context.name, context.version, observer);
    const facts = modelFactsOf(context);
    const created = await runBounded(names, INSTANCES_STARTED_AT_ONCE, (instance, i) => model.createInstance({ ...instance, health: pool.reporter(i) }));
    const instances = created.values.filter((instance) => instance !== undefined);
    try {
      if (created.failure) throw InferenceError.from(created.failure.reason, 'UNAVAILABLE', `${where}: creating an instance`);
      // Every instance is warmed before the version serves (Triton's model_warmup).
      // Warmups running when one fails are waited for: finalizing must not start while another instance still warms.
      log.verbose(`${where}: ${instances.length} instance(s) created${samples.length > 0 ? `, warming up with ${samples.length} sample(s)` : ''}`);
      const warmed = await runBounded(instances, INSTANCES_STARTED_AT_ONCE, (instance, i) => warmUp(context, names[i]!.name, instance, samples));
      if (warmed.failure) throw warmed.failure.reason;
      instances.forEach((instance, i) => pool.attach(i, new InstanceRunner(instance, facts.decoupled, statistics)));
      const scheduler = await schedulerFor(context, pool);
      const served = new ServedModelVersion(context, model, pool, statistics, facts, scheduler, log, server, outstanding);
      served.loadDurationMs = performance.now() - started;
      log.verbose(`${where}: scheduled by ${scheduler.constructor.name}; loaded in ${served.loadDurationMs.toFixed(1)} ms`);
      return served;
    } catch (error) {
      pool.unlimit();
      await finalizeAll(instances, model);
      throw InferenceError.from(error, 'UNAVAILABLE', where);
    }
  }

  /**
   * Accepts a validated request; from here on its sink hears exactly one end or error.
   * With a response cache, the request goes through it (cache/cached-submit.ts) unless
   * `bypassCache` says otherwise.
   */
  submit(request: ValidatedRequest, sink: ResponseSink, options?: { readonly bypassCache?: boolean }): InferenceRequest {
    if (this.cache && !options?.bypassCache) return submitCached(this, this.cache, request, sink);
    return this.enqueue(this.accept(request, this.answering(sink)));
  }

  // The steps of submit, which the response cache takes one by one (CacheableVersion).

  accept(request: ValidatedRequest, sink: ResponseSink): InferenceRequest {
    const accepted = new InferenceRequest(this.context.name, this.context.version, request, sink, this.onEnd, this.outputs);
    this.outstanding.add(accepted);
    if (isObservingRequests()) publishStart(accepted, this.server);
    if (this.log.isVerbose(2)) this.log.verbose(`${accepted.describe()}: accepted (batch size ${accepted.batchSize})`, 2);
    return accepted;
  }

  answering(sink: ResponseSink): ResponseSink {
    const answer = this.responseOrder ? this.responseOrder.wrap(sink) : sink;
    // Only where a metric wants it: a decoupled model's time to its first response.
    return this.decoupled && this.statistics.observed ? timingFirstResponse(answer, this.statistics) : answer;
  }

  enqueue(accepted: InferenceRequest): InferenceRequest {
    if (isHeard(requestQueueChannel, accepted)) publishQueue(accepted);
    this.scheduler.enqueue(accepted);
    return accepted;
  }

  answerFromCache(accepted: InferenceRequest, outputs: Record<string, Tensor>, lookupStart: number): void {
    this.cacheHits.set(accepted, lookupStart);
    // Through the request's channel, as a backend's response: it ends the request (onEnd counts the hit).
    accepted.response.send(outputs, { final: true });
  }

  get isUnloading(): boolean {
    return this.unloading;
  }

  /**
   * Waits for accepted requests to finish, and for a sequence model's live sequences to
   * end (their requests are still taken meanwhile), until `deadline` (a performance.now() time),
   * then fails what is left with UNAVAILABLE. Then waits for executions still running
   * (a failed or cancelled request's backend may still be at work; it sees isCancelled),
   * for at most `graceMs` past the deadline, and finalizes the instances, then the model.
   * An execution still running after that is reported as a warning and the instances
   * are finalized anyway: finalize is the backend's chance to end it (stop a worker),
   * and a server that never finished stopping would be worse.
   */
  async unload(deadline: number, graceMs: number): Promise<void> {
    this.unloading = true;
    const where = `model '${this.context.name}' version ${this.version}`;
    this.log.verbose(`${where}: unloading, ${this.outstanding.size} request(s) in flight`);
    const drained = this.scheduler.drain().then(() => this.idle());
    if (!(await withTimeout(drained, deadline - performance.now()))) {
      for (const request of this.outstanding.toArray()) {
        request.cancel(new InferenceError('UNAVAILABLE', `${request.describe()}: the model was unloaded before the request completed`));
      }
    }
    // Every request has ended by now; this only ends the scheduler's timers and queue.
    this.scheduler.stop(new InferenceError('UNAVAILABLE', `model '${this.context.name}' version ${this.version} was unloaded`));
    if (!(await withTimeout(this.pool.idle(), deadline + graceMs - performance.now()))) {
      emitTritiumWarning(
        'TRITIUM_W005',
        `model '${this.context.name}' version ${this.version}: an execution was still running ${graceMs} ms after the exit timeout; finalizing its instances anyway`,
      );
    }
    this.pool.unlimit();
    await finalizeAll(this.pool.attached().map((runner) => runner.instance), this.model);
    this.statistics.close();
    this.log.verbose(`${where}: unloaded`);
  }

  /** Requests accepted and not yet executing (Triton's nv_inference_pending_request_count). */
  pendingCount(): number {
    let pending = 0;
    for (const request of this.outstanding.toArray()) if (request.executeStart === 0) pending++;
    return pending;
  }

  /** Asks every instance that can check its own readiness; a check that fails counts as not ready. */
  async instancesReady(): Promise<boolean> {
    const answers = await Promise.all(this.pool.attached().map((runner) => runner.instance.isReady?.().catch(() => false) ?? true));
    return answers.every(Boolean);
  }

  /** Whether a request of this sequence is still taken while the version drains (it continues a live sequence). */
  continues(sequence: SequenceOptions | undefined): boolean {
    return sequence !== undefined && (this.scheduler.continues?.(sequence) ?? false);
  }

  private idle(): Promise<void> {
    if (this.outstanding.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private readonly onEnd = (request: InferenceRequest, error?: InferenceError): void => {
    this.outstanding.delete(request);
    if (this.log.isVerbose(2)) this.log.verbose(`${request.describe()}: ${error ? `failed: ${error.message}` : 'done'}`, 2);
    // A response sent from execute's result ends when execute did; a later one (decoupled, a cancellation) ends now.
    const end = request.executeEnd || performance.now();
    const hitLookup = this.cacheHits.size > 0 ? this.cacheHits.get(request) : undefined;
    if (hitLookup !== undefined) this.cacheHits.delete(request);
    if (error) this.statistics.recordFailure(request.arrivalTime, end, failureReason(request, error));
    // As Triton: a hit is a success, but no inference (inference_count counts what models ran).
    else if (hitLookup !== undefined) this.statistics.recordCacheHit(hitLookup, end);
    else this.statistics.recordSuccess(request.batchSize, request.arrivalTime, request.executeStart || end, end, request.executionTimes);
    if (isHeard(requestEndChannel, request) || requestErrorChannel.hasSubscribers) publishEnd(request, error, end, hitLookup !== undefined);
    if (this.outstanding.size === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  };
}

/** An instance as a load's verbose line names it: `model_0 (KIND_CPU)`, `model_0 (KIND_GPU 1)`. */
function describeInstance({ name, kind, deviceId }: Omit<InstanceContext, 'health'>): string {
  return `${name} (${kind}${deviceId === undefined ? '' : ` ${deviceId}`})`;
}

/** A sink that records, for the statistics' observer, how long the first response took from now. */
function timingFirstResponse(sink: ResponseSink, statistics: ModelStatisticsRecorder): ResponseSink {
  const arrival = performance.now();
  let first = true;
  return {
    response(outputs, final) {
      if (first) {
        first = false;
        statistics.recordFirstResponse(arrival, performance.now());
      }
      sink.response(outputs, final);
    },
    end: () => sink.end(),
    error: (error) => sink.error(error),
  };
}

async function finalizeAll(instances: readonly BackendInstance[], model: BackendModel): Promise<void> {
  const results = await Promise.allSettled(instances.map(async (instance) => instance.finalize?.()));
  results.push(...(await Promise.allSettled([(async () => model.finalize?.())()])));
  for (const result of results) {
    if (result.status === 'rejected') emitTritiumWarning('TRITIUM_W006', `finalize failed: ${String(result.reason)}`);
  }
}

/** Each instance's place with the rate limiter, from its group's rate_limiter block; a CPU instance counts as device 0, as in Triton. */
function limitedInstances(context: ModelContext, names: readonly Omit<InstanceContext, 'health'>[], pool: InstancePool): LimitedInstance[] {
  const groups = new Map(context.config.instance_group.map((group) => [group.name, group]));
  return names.map((instance, i) => {
    const limit = groups.get(instance.name.slice(0, instance.name.lastIndexOf('_')))?.rate_limiter;
    return new LimitedInstance(`model '${context.name}' instance ${instance.name}`, { resources: limit?.resources ?? [], priority: limit?.priority ?? 0 }, instance.deviceId ?? 0, () => pool.grant(i));
  });
}
