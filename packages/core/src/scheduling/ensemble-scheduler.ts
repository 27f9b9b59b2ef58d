import { performance } from 'node:perf_hooks';
import type { Backend, ModelContext } from '../backend/backend.js';
import type { NormalizedEnsembleScheduling } from '../config/schema.js';
import { InferenceError } from '../errors.js';
import type { Tensor } from '../tensor/tensor.js';
import type { RunningInference } from '../types.js';
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

  constructor(private readonly context: ModelContext) {
    this.steps = context.config.ensemble_scheduling!.step;
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
    const steps = new Set<RunningInference>();
    const cancelSteps = () => {
      for (const step of steps) step.cancel();
    };
    const stopListening = request.onCancel(cancelSteps);
    const tensors = new Map<string, Tensor>(Object.entries(request.inputs));
    const started = new Set<number>();
    request.executeStart = performance.now();
    try {
      await new Promise<void>((resolve, reject) => {
        let inFlight = 0;
        let failed = false;
        const fail = (error: unknown) => {
          failed = true;
          reject(error);
        };
        const launch = () => {
          if (failed) return;
          this.steps.forEach((step, i) => {
            if (started.has(i) || !Object.values(step.input_map).every((name) => tensors.has(name))) return;
            started.add(i);
            inFlight++;
            this.runStep(step, i, tensors, request, steps).then(() => {
              inFlight--;
              launch();
            }, fail);
          });
          if (inFlight === 0) resolve();
        };
        launch();
      });
    } catch (error) {
      cancelSteps();
      request.response.fail(error);
      return;
    } finally {
      stopListening();
    }
    request.executeEnd = performance.now();
    const outputs: Record<string, Tensor> = {};
    for (const output of this.context.config.output) {
      const tensor = tensors.get(output.name);
      if (tensor) outputs[output.name] = tensor;
    }
    request.response.send(outputs, { final: true });
  }

  /** One step: its model's request, built from the ensemble's tensors; its outputs join them under their ensemble names. */
  private async runStep(step: Step, index: number, tensors: Map<string, Tensor>, request: InferenceRequest, running: Set<RunningInference>): Promise<void> {
    const inputs: Record<string, Tensor> = {};
    for (const [memberInput, ensembleTensor] of Object.entries(step.input_map)) inputs[memberInput] = tensors.get(ensembleTensor)!;
    const version = Number(step.model_version);
    try {
      const started = this.context.server.startInference(step.model_name, {
        inputs,
        outputs: Object.keys(step.output_map),
        modelVersion: version > 0 ? version : undefined,
        id: request.id,
        priority: request.priority,
        timeoutMicroseconds: request.timeoutMicroseconds,
        parameters: request.parameters,
        sequence: request.sequence,
      });
      running.add(started);
      const response = await started.response.finally(() => running.delete(started));
      for (const [memberOutput, ensembleTensor] of Object.entries(step.output_map)) tensors.set(ensembleTensor, response.outputs[memberOutput]!);
    } catch (error) {
      const failure = InferenceError.from(error);
      throw new InferenceError(failure.code, `${request.describe()}: ensemble step ${index} (model '${step.model_name}') failed: ${failure.message}`, { cause: error });
    }
  }
}
