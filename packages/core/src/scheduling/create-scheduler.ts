import type { ModelConfig } from '../config/schema.js';
import { InferenceError } from '../errors.js';
import { DefaultScheduler } from './default-scheduler.js';
import type { InstanceRunner } from './instance-runner.js';
import type { Scheduler } from './scheduler.js';

/**
 * Picks a model's scheduler from its config. Dynamic batching is not built yet: such
 * models run one request per execution (same results, no batching gain), which the
 * docs state. Sequence batching changes results (state, control inputs), so a model
 * that needs it is refused rather than served wrongly.
 */
export function createScheduler(config: ModelConfig, runners: readonly InstanceRunner[]): Scheduler {
  if (config.sequence_batching) {
    throw new InferenceError('UNSUPPORTED', `model '${config.name}': sequence_batching is not supported yet`);
  }
  return new DefaultScheduler(runners);
}
