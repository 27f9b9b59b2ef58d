import { InferenceError } from '@tritium/core/backend';
import type { InstanceContext } from '@tritium/core/backend';
import type { TorchAddon } from './native.js';

/** The CUDA devices libtorch sees; none throws UNAVAILABLE saying why and what to do. */
export function cudaDeviceCount(addon: TorchAddon): number {
  const count = addon.cudaDeviceCount();
  if (count === 0) {
    throw new InferenceError(
      'UNAVAILABLE',
      `KIND_GPU needs CUDA, and the libtorch the addon was built against (torch ${addon.torchVersion}) has no CUDA or no GPU is present; use KIND_CPU, or build the addon against a CUDA libtorch (TRITIUM_LIBTORCH_DIR)`,
    );
  }
  return count;
}

/** The libtorch device for an instance: its CUDA device for KIND_GPU (core checked the id against cudaDeviceCount), else the CPU. */
export function deviceOf(instance: InstanceContext): string {
  return instance.kind === 'KIND_GPU' ? `cuda:${instance.deviceId ?? 0}` : 'cpu';
}
