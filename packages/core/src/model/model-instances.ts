import type { Backend, InstanceContext, ModelContext } from '../contract/backend.js';
import { checkInstanceCount } from '../config/instance-limit.js';
import { InferenceError } from '../errors.js';

/**
 * Every instance of every instance group, as Triton makes them: `count` per group, and
 * for KIND_GPU `count` on each of the group's GPUs (every GPU the backend finds when the
 * group lists none). Names are `<group>_<index>`, whatever the count, as Triton's
 * backend_model.cc names them. GPU groups need a backend that runs on GPUs (`gpuCount`). More
 * than `maxInstances` in all is INVALID_ARG, checked before any instance is listed.
 */
export function modelInstances(backend: Backend, context: ModelContext, maxInstances: number): Omit<InstanceContext, 'health'>[] {
  const groups = context.config.instance_group.map((group) => ({
    group,
    devices: group.kind === 'KIND_GPU' ? gpusOf(backend, context.name, group.name, group.gpus) : [undefined],
  }));
  checkInstanceCount(context.name, groups.map(({ group, devices }) => ({ name: group.name, instances: group.count * devices.length })), maxInstances);
  return groups.flatMap(({ group, devices }) => {
    const names = Array.from({ length: group.count }, (_, i) => `${group.name}_${i}`);
    return devices.flatMap((deviceId) => names.map((name) => (deviceId === undefined ? { name, kind: group.kind } : { name, kind: group.kind, deviceId })));
  });
}

/** The GPUs a KIND_GPU group runs on; UNAVAILABLE where the backend has none, INVALID_ARG for an id it does not have. */
function gpusOf(backend: Backend, model: string, group: string, listed: readonly number[]): readonly number[] {
  const where = `model '${model}': instance group ${group} has kind KIND_GPU`;
  const count = gpuCountOf(backend, where);
  if (count === 0) throw new InferenceError('UNAVAILABLE', `${where}, but backend '${backend.name}' finds no GPU`);
  const invalid = listed.find((id) => id >= count);
  if (invalid !== undefined) {
    throw new InferenceError('INVALID_ARG', `${where} and specifies invalid or unsupported gpu id ${invalid}: backend '${backend.name}' finds ${count} GPU(s)`);
  }
  return listed.length > 0 ? listed : Array.from({ length: count }, (_, i) => i);
}

/** The backend's GPU count; its reason for having none is told with the model and group it stops. */
function gpuCountOf(backend: Backend, where: string): number {
  if (!backend.gpuCount) throw new InferenceError('UNAVAILABLE', `${where}, but backend '${backend.name}' runs models on the CPU only`);
  try {
    return backend.gpuCount();
  } catch (error) {
    const reason = InferenceError.from(error, 'UNAVAILABLE');
    throw new InferenceError(reason.code, `${where}: ${reason.message}`, { cause: error });
  }
}
