import type { Backend, BackendModel, ModelContext } from '@tritium/core';
import { FilModel } from './fil-model.js';

/**
 * Triton's FIL backend (`backend: "fil"`): LightGBM and XGBoost forests, parsed and
 * evaluated in TypeScript over flat typed arrays, with FIL's parameters and file names.
 */
export function filBackend(): Backend {
  return {
    name: 'fil',
    // No defaultModelFilename: the file depends on the config's model_type (see MODEL_FILES).
    createModel: (context: ModelContext): Promise<BackendModel> => FilModel.load(context),
  };
}

/** Official backends are loaded by importing the package and calling `createBackend()`. */
export const createBackend = filBackend;
