import type { NormalizedModelConfig } from '../config/schema.js';
import { DefaultScheduler } from './default-scheduler.js';
import type { InstancePool } from './instance-pool.js';
import type { Scheduler } from './scheduler.js';

/**
 * The one place a model's scheduler is chosen from its config. The dynamic and sequence
 * batchers come with the batching work: until then a `dynamic_batching` model runs one
 * request per execution on the default scheduler (as docs/model-repository.md says),
 * and `sequence_batching` is refused at load (model-config-resolver.ts).
 */
export function schedulerFor(_config: NormalizedModelConfig, pool: InstancePool): Scheduler {
  return new DefaultScheduler(pool);
}
