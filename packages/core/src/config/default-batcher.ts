import type { ModelConfig } from './schema.js';

/**
 * What Triton's backends do when they auto-complete a config: a model that batches
 * (max_batch_size above 1) and names no scheduler gets the dynamic batcher.
 */
export function withDefaultBatcher(config: ModelConfig): ModelConfig {
  const unscheduled = config.dynamic_batching === undefined && config.sequence_batching === undefined && config.ensemble_scheduling === undefined;
  return (config.max_batch_size ?? 0) > 1 && unscheduled ? { ...config, dynamic_batching: {} } : config;
}
