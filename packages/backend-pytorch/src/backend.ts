import { InferenceError } from '@tritium/core';
import type { Backend, BackendModel, ModelContext, NormalizedModelConfig } from '@tritium/core';
import { loadTorchAddon } from './native.js';
import { PytorchModel } from './pytorch-model.js';

/** Triton serves strings to TorchScript as List[str]; this backend does not yet. */
function refuseStrings(config: NormalizedModelConfig): void {
  const strings = [...config.input, ...config.output].filter((tensor) => tensor.data_type === 'TYPE_STRING').map((tensor) => tensor.name);
  if (strings.length > 0) {
    throw new InferenceError(
      'UNSUPPORTED',
      `model '${config.name}': TYPE_STRING tensors (${strings.join(', ')}) are not supported by @tritium/backend-pytorch yet (Triton passes them to forward() as List[str])`,
    );
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
      let addon;
      try {
        addon = loadTorchAddon();
      } catch (error) {
        throw new InferenceError('UNAVAILABLE', `model '${context.name}': ${(error as Error).message}`);
      }
      refuseStrings(context.config);
      return new PytorchModel(context, addon);
    },
  };
}

/** Official backends are loaded by importing the package and calling `createBackend()`. */
export const createBackend = pytorchBackend;
