import type { ModelContext } from '../contract/backend.js';
import { DefaultScheduler } from './default-scheduler.js';
import { DynamicBatchScheduler } from './dynamic-batch-scheduler.js';
import { EnsembleScheduler } from './ensemble-scheduler.js';
import type { InstancePool } from './instance-pool.js';
import type { Scheduler } from './scheduler.js';
import { SequenceBatchScheduler } from './sequence-batch-scheduler.js';
import { SequenceStates } from './sequence-states.js';

/** The one place a model's scheduler is chosen from its config (async: a sequence model's initial state is read from files). */
export async function schedulerFor(context: ModelContext, pool: InstancePool): Promise<Scheduler> {
  const { config } = context;
  if (config.ensemble_scheduling) return new EnsembleScheduler(context);
  if (config.sequence_batching) return new SequenceBatchScheduler(config, pool, await SequenceStates.load(config, context.modelDirectory));
  if (config.dynamic_batching) return new DynamicBatchScheduler(config, pool);
  return new DefaultScheduler(pool);
}
