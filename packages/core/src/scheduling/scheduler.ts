import type { InferenceRequest } from './inference-request.js';

/** Decides when and on which instance an accepted request runs. */
export interface Scheduler {
  enqueue(request: InferenceRequest): void;
}
