import type { NormalizedModelConfig } from '../config/schema.js';

/** The sequence batcher's control inputs (START, END, READY, CORRID) by name: the model takes them as inputs, which the batcher fills. */
export function controlInputNames(config: NormalizedModelConfig): string[] {
  return (config.sequence_batching?.control_input ?? []).map((c) => c.name).filter((name) => name !== '');
}
