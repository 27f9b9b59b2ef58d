import { performance } from 'node:perf_hooks';
import type { Backend, BackendInstance, BackendModel, InstanceContext, ModelContext } from '../backend/backend.js';
import { InferenceError } from '../errors.js';
import { ModelStatisticsRecorder } from '../observability/statistics.js';
import { DefaultScheduler } from '../scheduling/default-scheduler.js';
import { InferenceRequest, type ValidatedRequest } from '../scheduling/inference-request.js';
import { InstanceRunner } from '../scheduling/instance-runner.js';
import { ModelOutputs } from '../scheduling/model-outputs.js';
import type { ResponseSink } from '../scheduling/response-channel.js';
import type { Scheduler } from '../scheduling/scheduler.js';
import { RequestValidator } from './request-validator.js';
import { withTimeout } from './with-timeout.js';

/**
 * One loaded model version: its backend model, instances, scheduler, the door check
 * built from its config, and its statistics. It tracks every accepted request until
 * its last response, so unloading can drain them.
 */
export class ServedModelVersion {
  readonly validator: RequestValidator;
  private readonly outputs: ModelOutputs;
  private readonly outstanding = new Set<InferenceRequest>();
  private idleWaiters: Array<() => void> = [];
  private readonly scheduler: Scheduler;

  private constructor(
    readonly context: ModelContext,
    private readonly model: BackendModel,
    private readonly runners: readonly InstanceRunner[],
    readonly statistics: ModelStatisticsRecorder,
    /** Answers zero or more responses per request (model_transaction_policy.decoupled). */
    readonly decoupled: boolean,
  ) {
    this.validator = new RequestValidator(context.config);
    this.outputs = new ModelOutputs(context.config);
    // Dynamic batching is not built yet: such models run one request per execution too.
    this.scheduler = new DefaultScheduler(runners);
  }

  get version(): number {
    return this.context.version;
  }

  get description(): string | undefined {
    return this.model.description;
  }

  /** Creates the backend model and every instance of every instance group. */
  static async load(backend: Backend, context: ModelContext): Promise<ServedModelVersion> {
    const where = `model '${context.name}' version ${context.version}`;
    let model: BackendModel;
    try {
      model = await backend.createModel(context);
    } catch (error) {
      throw InferenceError.from(error, 'UNAVAILABLE', where);
    }
    const statistics = new ModelStatisticsRecorder(context.name, context.version);
    const decoupled = context.config.model_transaction_policy?.decoupled ?? false;
    const names = instanceNames(context);
    const created = await Promise.allSettled(names.map((instance) => model.createInstance(instance)));
    const failure = created.find((result) => result.status === 'rejected');
    const instances = created.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    try {
      if (failure) throw InferenceError.from(failure.reason, 'UNAVAILABLE', `${where}: creating an instance`);
      const runners = instances.map((instance) => new InstanceRunner(instance, decoupled, statistics));
      return new ServedModelVersion(context, model, runners, statistics, decoupled);
    } catch (error) {
      await finalizeAll(instances, model);
      throw InferenceError.from(error, 'UNAVAILABLE', where);
    }
  }

  /** Accepts a validated request; from here on its sink hears exactly one end or error. */
  submit(request: ValidatedRequest, sink: ResponseSink): InferenceRequest {
    const accepted = new InferenceRequest(this.context.name, this.context.version, request, sink, this.onEnd, this.outputs);
    this.outstanding.add(accepted);
    this.scheduler.enqueue(accepted);
    return accepted;
  }

  /**
   * Waits for accepted requests to finish, up to timeoutMs, and fails what is left
   * with UNAVAILABLE. Then waits for executions still running (a cancelled request's
   * backend may still be at work), again up to timeoutMs, before finalizing the
   * instances and the model.
   */
  async unload(timeoutMs: number): Promise<void> {
    if (!(await withTimeout(this.idle(), timeoutMs))) {
      for (const request of [...this.outstanding]) {
        request.cancel(new InferenceError('UNAVAILABLE', `${request.describe()}: the model was unloaded before the request completed`));
      }
    }
    await withTimeout(Promise.all(this.runners.map((runner) => runner.idle())), timeoutMs);
    await finalizeAll(this.runners.map((runner) => runner.instance), this.model);
  }

  private idle(): Promise<void> {
    if (this.outstanding.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private readonly onEnd = (request: InferenceRequest, error?: InferenceError): void => {
    this.outstanding.delete(request);
    // A response sent from execute's result ends when execute did; a later one (decoupled, a cancellation) ends now.
    const end = request.executeEnd || performance.now();
    if (error) this.statistics.recordFailure(request.arrivalTime, end);
    else this.statistics.recordSuccess(request.batchSize, request.arrivalTime, request.executeStart || end, end);
    if (this.outstanding.size === 0 && this.idleWaiters.length > 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  };
}

/**
 * Every instance of every instance group: `count` per group, named after the group and
 * suffixed `_<index>` when the group makes several (as Triton). GPU groups never get
 * here: validation refuses them, as this machine has no GPU to give a device id.
 */
function instanceNames(context: ModelContext): InstanceContext[] {
  const groups = context.config.instance_group ?? [];
  return groups.flatMap((group, g) => {
    const count = Number(group.count ?? 1);
    const groupName = group.name ?? `${context.name}_${g}`;
    return Array.from({ length: count }, (_, i) => ({
      name: count > 1 ? `${groupName}_${i}` : groupName,
      kind: group.kind ?? 'KIND_CPU',
    }));
  });
}

async function finalizeAll(instances: readonly BackendInstance[], model: BackendModel): Promise<void> {
  const results = await Promise.allSettled(instances.map(async (instance) => instance.finalize?.()));
  results.push(...(await Promise.allSettled([(async () => model.finalize?.())()])));
  for (const result of results) {
    if (result.status === 'rejected') process.emitWarning(`finalize failed: ${String(result.reason)}`, 'TritiumWarning');
  }
}
