import { InferenceError } from '@tritium/core';
import type { InstanceContext } from '@tritium/core';
import type { TorchAddon } from './native.js';

/** The libtorch device for an instance: the CPU, or a CUDA device where libtorch has CUDA and the GPU is there. */
export function deviceOf(model: string, instance: InstanceContext, addon: TorchAddon): string {
  if (instance.kind !== 'KIND_GPU') return 'cpu';
  const id = instance.deviceId ?? 0;
  const count = addon.cudaDeviceCount();
  if (count === 0) {
    throw new InferenceError(
      'UNAVAILABLE',
      `model '${model}' instance '${instance.name}': KIND_GPU needs CUDA, and the libtorch the addon was built against (torch ${addon.torchVersion}) has no CUDA or no GPU is present; use KIND_CPU, or build the addon against a CUDA libtorch (TRITIUM_LIBTORCH_DIR)`,
    );
  }
  if (id >= count) throw new InferenceError('UNAVAILABLE', `model '${model}' instance '${instance.name}': GPU ${id} does not exist (libtorch sees ${count})`);
  return `cuda:${id}`;
}
