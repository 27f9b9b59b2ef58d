import type { Backend, BackendModel, ModelContext } from '@tritium/core/backend';
import { FilModel } from './fil-model.js';
import { ForestPool } from './forest-pool.js';

/**
 * Triton's FIL backend (`backend: "fil"`): LightGBM and XGBoost forests, parsed and
 * evaluated in TypeScript over flat typed arrays, with FIL's parameters and file names.
 */
export function filBackend(): Backend {
  // Every model's large batches share these threads, so threads do not multiply with models.
  const pool = new ForestPool();
  return {
    name: 'fil',
    // No defaultModelFilename: the file depends on the config's model_type (see MODEL_FILES).
    createModel: (context: ModelContext): Promise<BackendModel> => FilModel.load(context, pool),
  };
}

/**
 * What core's registry of official backends calls, `createBackend(name, settings)`, when a
 * model needs 'fil' and the application passed none. filBackend() takes no options: the
 * server's `backendSettings.fil` has nothing to set.
 */
export const createBackend = (_name = 'fil', _settings: Readonly<Record<string, unknown>> = {}): Backend => filBackend();
