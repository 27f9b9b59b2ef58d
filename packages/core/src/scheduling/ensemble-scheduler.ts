import { performance } from 'node:perf_hooks';
import type { Backend, ModelContext } from '../contract/backend.js';
import type { NormalizedEnsembleScheduling } from '../config/schema.js';
import { InferenceError } from '../errors.js';
import { startStep } from '../observability/request-publishing.js';
import type { Tensor } from '../tensor/tensor.js';
import type { InferenceRequest } from './inference-request.js';
import type { Scheduler } from './scheduler.js';

type Step = NormalizedEnsembleScheduling['step'][number];

/** What serves an ensemble model: no instances (its scheduler runs the steps' models), so nothing to create. */
export const ENSEMBLE_BACKEND: Backend = {
  name: 'ensemble',
  async createModel() {
    return {
      description: 'ensemble',
      createInstance: () => Promise.reject(new InferenceError('INTERNAL', 'an ensemble has no instances')),
    };
  },
};

/**
 * Runs an ensemble's requests (Triton's ensemble scheduler): each step is a request to
 * its model through the server, started as soon as every tensor it reads exists, so
 * independent branches run at once; tensors pass between steps as they are, without
 * copies. The ensemble has no instances of its own: its steps queue at their models.
 * A failing step fails the request naming the step and its model, and cancels the
 * steps still running; cancelling the request cancels them at once (Triton only looks
 * between steps).
 */
export class EnsembleScheduler implements Scheduler {
  private readonly running = new Set<InferenceRequest>();
  private idleWaiters: Array<() => void> = [];
  private readonly steps: readonly Step[];
  /** Per step, read once: the ensemble tensors it reads, its maps as entries, its model's output names, the version it names. */
  private readonly plans: ReadonlyArray<{ reads: string[]; inputs: Array<[string, string]>; outputs: Array<[string, string]>; outputNames: string[]; modelVersion: number | undefined }>;
  /** Per step, the steps that do not read (directly or not) what it makes: a decoupled step's flow counts them as done. */
  private readonly notDownstream: ReadonlyArray<readonly number[]>;
  private readonly decoupledMembers = new Map<string, boolean>();
  /** Per step, its requests in flight across all of the ensemble's requests, and those waiting for a place (max_inflight_requests). */
  private readonly inflight: Array<{ count: number; waiting: Array<() => void> }>;
  private readonly inflightLimit: number;

  constructor(private readonly context: ModelContext) {
    const scheduling = context.config.ensemble_scheduling!;
    this.steps = scheduling.step;
    this.plans = this.steps.map((step) => ({
      reads: Object.values(step.input_map),
      inputs: Object.entries(step.input_map),
      outputs: Object.entries(step.output_map),
      outputNames: Object.keys(step.output_map),
      modelVersion: Number(step.model_version) > 0 ? Number(step.model_version) : undefined,
    }));
    this.notDownstream = this.steps.map((_, i) => {
      const downstream = downstreamOf(this.steps, i);
      return this.steps.map((_, j) => j).filter((j) => !downstream.has(j));
    });
    this.inflight = this.steps.map(() => ({ count: 0, waiting: [] }));
    this.inflightLimit = Number(scheduling.max_inflight_requests) || Infinity;
  }

  enqueue(request: InferenceRequest): void {
    this.running.add(request);
    void this.run(request).finally(() => {
      this.running.delete(request);
      if (this.running.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    });
  }

  drain(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  stop(error: InferenceError): void {
    for (const request of this.running) request.cancel(error);
  }

  private async run(request: InferenceRequest): Promise<void> {
    // The steps under way, cancelled together when the request is cancelled or a step fails.
    const steps = new Set<{ cancel(): void }>();
    const cancelSteps = () => {
      for (const step of steps) step.cancel();
    };
    const stopListening = request.onCancel(cancelSteps);
    const decoupled = this.context.config.model_transaction_policy.decoupled;
    let last: Record<string, Tensor> | undefined;
    // A decoupled ensemble answers once per flow that makes its outputs; an ordinary one once, at the end.
    const emit = (outputs: Record<string, Tensor>) => (decoupled ? request.response.send(outputs) : (last = outputs));
    request.executeStart = performance.now();
    try {
      await this.flow(request, new Map(Object.entries(request.inputs)), new Set(), steps, emit);
    } catch (error) {
      cancelSteps();
      request.response.fail(error);
      return;
    } finally {
      stopListening();
    }
    request.executeEnd = performance.now();
    if (decoupled) request.response.close();
    else request.response.send(last ?? {}, { final: true });
  }

  /**
   * Runs every step whose inputs exist, and the steps those make possible, until none is
   * left; then emits the ensemble outputs if they are all there. Each response of a
   * decoupled step continues as a flow of its own over the steps downstream of it.
   * Resolves when this flow and every flow it started have ended.
   */
  private flow(request: InferenceRequest, tensors: Map<string, Tensor>, started: Set<number>, running: Set<{ cancel(): void }>, emit: (outputs: Record<string, Tensor>) => void): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let inFlight = 0;
      let failed = false;
      const forks: Promise<void>[] = [];
      const fail = (error: unknown) => {
        failed = true;
        reject(error);
      };
      const launch = () => {
        if (failed) return;
        this.steps.forEach((step, i) => {
          if (started.has(i) || !this.plans[i]!.reads.every((name) => tensors.has(name))) return;
          started.add(i);
          inFlight++;
          const fork = (outputs: ReadonlyMap<string, Tensor>) => {
            forks.push(this.flow(request, new Map([...tensors, ...outputs]), new Set(this.notDownstream[i]), running, emit));
          };
          this.runStep(step, i, tensors, request, running, fork).then(() => {
            inFlight--;
            launch();
          }, fail);
        });
        if (inFlight > 0) return;
        const outputs = this.outputsOf(tensors);
        if (outputs) emit(outputs);
        if (forks.length === 0) resolve();
        else Promise.all(forks).then(() => resolve(), fail);
      };
      launch();
    });
  }

  /** The ensemble's outputs, when the tensors hold every one of them. */
  private outputsOf(tensors: ReadonlyMap<string, Tensor>): Record<string, Tensor> | undefined {
    const outputs: Record<string, Tensor> = {};
    for (const output of this.context.config.output) {
      const tensor = tensors.get(output.name);
      if (!tensor) return undefined;
      outputs[output.name] = tensor;
    }
    return outputs;
  }

  /**
   * One step: its model's request, built from the ensemble's tensors. An ordinary model's
   * outputs join the tensors under their ensemble names; each response of a decoupled
   * one goes to `fork` instead.
   */
  private async runStep(
    step: Step,
    index: number,
    tensors: Map<string, Tensor>,
    request: InferenceRequest,
    running: Set<{ cancel(): void }>,
    fork: (outputs: ReadonlyMap<string, Tensor>) => void,
  ): Promise<void> {
    const plan = this.plans[index]!;
    const inputs: Record<string, Tensor> = {};
    for (const [memberInput, ensembleTensor] of plan.inputs) inputs[memberInput] = tensors.get(ensembleTensor)!;
    const stepRequest = {
      inputs,
      outputs: plan.outputNames,
      modelVersion: plan.modelVersion,
      id: request.id,
      priority: request.priority,
      timeoutMicroseconds: request.timeoutMicroseconds,
      parameters: request.parameters,
      sequence: request.sequence,
    };
    const renamed = (outputs: Record<string, Tensor>) => new Map(plan.outputs.map(([memberOutput, name]) => [name, outputs[memberOutput]!]));
    // max_inflight_requests: a step takes a place before its request starts and gives it back when it ends.
    const place = this.inflight[index]!;
    if (place.count >= this.inflightLimit) await new Promise<void>((resolve) => place.waiting.push(resolve));
    place.count++;
    try {
      // A request cancelled (or failed) while this step waited starts nothing more.
      if (request.isCancelled || request.response.isEnded) throw new InferenceError('CANCELLED', 'the ensemble request ended before this step started');
      if (this.decoupledMembers.get(step.model_name) ?? (await this.isDecoupled(step.model_name))) {
        // A stream is cancelled through its signal; decoupled steps are few enough for its cost.
        const controller = new AbortController();
        const handle = { cancel: () => controller.abort() };
        running.add(handle);
        try {
          const responses = startStep(request, () => this.context.server.inferStream(step.model_name, { ...stepRequest, signal: controller.signal }));
          for await (const response of responses) fork(renamed(response.outputs));
        } finally {
          running.delete(handle);
        }
        return;
      }
      const started = startStep(request, () => this.context.server.startInference(step.model_name, stepRequest));
      running.add(started);
      let response;
      try {
        response = await started.response;
      } finally {
        running.delete(started);
      }
      for (const [memberOutput, name] of plan.outputs) tensors.set(name, response.outputs[memberOutput]!);
    } catch (error) {
      const failure = InferenceError.from(error);
      throw new InferenceError(failure.code, `${request.describe()}: ensemble step ${index} (model '${step.model_name}') failed: ${failure.message}`, { cause: error });
    } finally {
      place.count--;
      place.waiting.shift()?.();
    }
  }

  /** Whether a step's model answers zero or more times (read from its config once). */
  private async isDecoupled(model: string): Promise<boolean> {
    let known = this.decoupledMembers.get(model);
    if (known === undefined) {
      known = (await this.context.server.modelConfig(model)).model_transaction_policy.decoupled;
      this.decoupledMembers.set(model, known);
    }
    return known;
  }
}

/** The steps that read, directly or through other steps, a tensor step `first` makes. */
function downstreamOf(steps: readonly Step[], first: number): Set<number> {
  const found = new Set<number>();
  const made = new Set(Object.values(steps[first]!.output_map));
  for (let grew = true; grew; ) {
    grew = false;
    steps.forEach((step, j) => {
      if (found.has(j) || j === first || !Object.values(step.input_map).some((name) => made.has(name))) return;
      found.add(j);
      for (const name of Object.values(step.output_map)) made.add(name);
      grew = true;
    });
  }
  return found;
}
