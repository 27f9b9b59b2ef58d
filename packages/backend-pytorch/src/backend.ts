import { InferenceError } from '@tritium/core/backend';
import type { Backend, BackendModel, ModelContext, NormalizedModelConfig } from '@tritium/core/backend';
import { cudaDeviceCount } from './devices.js';
import { loadTorchAddon } from './native.js';
import type { TorchAddon } from './native.js';
import { PytorchModel } from './pytorch-model.js';

/** Config datatypes the addon cannot carry, and why. */
const UNSERVED: Readonly<Record<string, string>> = {
  TYPE_UINT16: 'libtorch has too few operators for unsigned 16-bit tensors',
  TYPE_UINT32: 'libtorch has too few operators for unsigned 32-bit tensors',
  TYPE_UINT64: 'libtorch has too few operators for unsigned 64-bit tensors',
};

/** Refuses at load a model with a tensor of a datatype the backend does not serve, or with implicit sequence state (which Triton's PyTorch backend lacks too). */
function refuseUnserved(config: NormalizedModelConfig): void {
  if (config.sequence_batching?.state.length) {
    throw new InferenceError('UNSUPPORTED', `model '${config.name}': sequence_batching.state (implicit state) is not supported by @tritium/backend-pytorch; pass the state as an input and output`);
  }
  for (const tensor of [...config.input, ...config.output]) {
    const why = UNSERVED[tensor.data_type];
    if (why) throw new InferenceError('UNSUPPORTED', `model '${config.name}': tensor '${tensor.name}' is ${tensor.data_type}, which @tritium/backend-pytorch does not serve (${why})`);
  }
}

/** The addon, or UNAVAILABLE saying what to install. */
function requireAddon(what: string): TorchAddon {
  try {
    return loadTorchAddon();
  } catch (error) {
    throw InferenceError.from(error, 'UNAVAILABLE', what);
  }
}

/**
 * The PyTorch backend: serves `backend: "pytorch"` / `platform: "pytorch_libtorch"`
 * TorchScript models (`model.pt`) in-process through a libtorch addon. Without the addon
 * the package still imports, and each model fails to load with UNAVAILABLE saying what
 * to install.
 */
export function pytorchBackend(): Backend {
  return {
    name: 'pytorch',
    platforms: ['pytorch_libtorch'],
    defaultModelFilename: 'model.pt',

    async createModel(context: ModelContext): Promise<BackendModel> {
      const addon = requireAddon(`model '${context.name}'`);
      refuseUnserved(context.config);
      return new PytorchModel(context, addon);
    },

    gpuCount: () => cudaDeviceCount(requireAddon('KIND_GPU')),
  };
}

/**
 * What core's registry of official backends calls, `createBackend(name, settings)`, when a
 * model needs 'pytorch' and the application passed none. pytorchBackend() takes no
 * options: the server's `backendSettings.pytorch` has nothing to set.
 */
export const createBackend = (_name = 'pytorch', _settings: Readonly<Record<string, unknown>> = {}): Backend => pytorchBackend();
