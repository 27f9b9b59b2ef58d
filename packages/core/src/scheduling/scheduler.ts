import type { SequenceOptions } from '../contract/inference.js';
import type { InferenceError } from '../errors.js';
import type { InferenceRequest } from './inference-request.js';

/** Decides when and on which instance of the model's InstancePool an accepted request runs. */
export interface Scheduler {
  enqueue(request: InferenceRequest): void;
  /**
   * The model is unloading: stops holding work back for a better batch (queue delays),
   * so what is queued runs as soon as instances are free, and stops taking new
   * sequences. Resolves when the scheduler has no live work of its own left (every
   * live sequence ended or idled out); the caller waits for it up to its deadline.
   */
  drain(): Promise<void>;
  /** Fails whatever is still queued with `error` and ends the scheduler's timers; runs in progress finish on their own. */
  stop(error: InferenceError): void;
  /** Whether a request of this sequence is still taken while the model drains (it continues a live sequence). */
  continues?(sequence: SequenceOptions): boolean;
}
