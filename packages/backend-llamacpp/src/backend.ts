import type { Backend, BackendModel, CustomMetric, CustomMetricFamily, ModelConfig, ModelContext } from '@tritium/core/backend';
import type { Llama } from 'node-llama-cpp';
import { ENGINE_SETTINGS_FILE } from './engine-settings.js';
import { startLlama } from './llama-runtime.js';
import { LlamacppModel } from './llamacpp-model.js';
import { INPUTS, OUTPUTS } from './tensors.js';

/**
 * `backend: "llamacpp"`: GGUF language models on llama.cpp (node-llama-cpp), with the
 * model layout and tensors of Triton's vLLM backend: `<model>/<version>/model.json`
 * names the GGUF file and the engine settings; the model is decoupled and batches
 * concurrent requests itself, token by token.
 */
export function llamacppBackend(): Backend {
  let llama: Promise<Llama> | undefined;
  const models = new Set<LlamacppModel>();
  return {
    name: 'llamacpp',
    defaultModelFilename: ENGINE_SETTINGS_FILE,

    async autoCompleteConfig(config: ModelConfig): Promise<ModelConfig> {
      const has = (list: readonly { name?: string }[] | undefined, name: string) => list?.some((tensor) => tensor.name === name) ?? false;
      return {
        ...config,
        backend: 'llamacpp',
        input: [...(config.input ?? []), ...INPUTS.filter((tensor) => !has(config.input, tensor.name!))],
        output: [...(config.output ?? []), ...OUTPUTS.filter((tensor) => !has(config.output, tensor.name!))],
        // As Triton's vLLM backend: a stream of responses, and no batching by the server (llama.cpp batches).
        model_transaction_policy: { ...config.model_transaction_policy, decoupled: true },
        max_batch_size: 0,
      };
    },

    async createModel(context: ModelContext): Promise<BackendModel> {
      llama ??= startLlama();
      // A failed start (no binary) is tried again by the next load.
      const runtime = await llama.catch((error: unknown) => {
        llama = undefined;
        throw error;
      });
      const model = await LlamacppModel.load(context, runtime);
      models.add(model);
      return {
        description: model.description,
        createInstance: (instance) => model.createInstance(instance),
        finalize: async () => {
          models.delete(model);
          await model.finalize();
        },
      };
    },

    // One family per name, with a metric per model version.
    customMetrics: () => mergeFamilies([...models].map((model) => model.metrics.families())),

    async finalize(): Promise<void> {
      const runtime = await llama?.catch(() => undefined);
      await runtime?.dispose();
    },
  };
}

/**
 * What core's registry of official backends calls, `createBackend(name, settings)`, when a
 * model needs 'llamacpp' and the application passed none. llamacppBackend() takes no
 * options: the server's `backendSettings.llamacpp` has nothing to set.
 */
export const createBackend = (_name = 'llamacpp', _settings: Readonly<Record<string, unknown>> = {}): Backend => llamacppBackend();

function mergeFamilies(perModel: readonly CustomMetricFamily[][]): CustomMetricFamily[] {
  const byName = new Map<string, CustomMetricFamily & { metrics: CustomMetric[] }>();
  for (const family of perModel.flat()) {
    const merged = byName.get(family.name) ?? { ...family, metrics: [] };
    merged.metrics.push(...family.metrics);
    byName.set(family.name, merged);
  }
  return [...byName.values()];
}
