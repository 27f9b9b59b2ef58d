import { InferenceError } from '../errors.js';

/**
 * The most instances one model version may have unless the server raises it
 * (ServerOptions.maxInstancesPerModel). Each instance is a worker thread, a native
 * thread or a process with its own copy of the model, so more instances than cores
 * (or a few per GPU) only cost memory: 64 covers one per core of a large host, or 8 on
 * each of 8 GPUs, and refuses a config that would exhaust the host's memory at load.
 */
export const DEFAULT_MAX_INSTANCES_PER_MODEL = 64;

/**
 * Refuses instance groups whose instances, all groups of the model together, exceed
 * `limit`: INVALID_ARG naming the group that goes over, its count and the limit.
 */
export function checkInstanceCount(model: string, groups: ReadonlyArray<{ readonly name: string; readonly instances: number }>, limit: number): void {
  let total = 0;
  for (const { name, instances } of groups) {
    total += instances;
    if (total > limit) {
      const others = total - instances;
      throw new InferenceError(
        'INVALID_ARG',
        `model '${model}': instance group ${name} asks for ${instances} instance(s)${others ? `, ${total} with the model's other groups` : ''}, ` +
          `over the limit of ${limit} instances per model (raise it with the server option maxInstancesPerModel, or tritium serve --max-instances-per-model)`,
      );
    }
  }
}
