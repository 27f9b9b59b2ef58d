import type { InferenceError } from '../errors.js';
import type { InferenceRequest } from './inference-request.js';

/** Decides when and on which instance of the model's InstancePool an accepted request runs. */
export interface Scheduler {
  enqueue(request: InferenceRequest): void;
  /**
   * Stops holding work back for a better batch (queue delays): what is queued runs as
   * soon as instances are free. Called when the model is unloading.
   */
  drain(): void;
  /** Fails whatever is still queued with `error` and ends the scheduler's timers; runs in progress finish on their own. */
  stop(error: InferenceError): void;
}
