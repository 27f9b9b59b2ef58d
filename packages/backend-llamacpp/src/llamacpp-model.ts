import { access } from 'node:fs/promises';
import { InferenceError, type BackendInstance, type BackendModel, type InstanceContext, type ModelContext } from '@tritium/core/backend';
import type { Llama, LlamaModel } from 'node-llama-cpp';
import { readEngineSettings, type EngineSettings } from './engine-settings.js';
import { GenerationMetrics } from './generation-metrics.js';
import { LlamacppInstance } from './llamacpp-instance.js';

/** A GGUF model loaded once per model version; each instance runs its own context on it. */
export class LlamacppModel implements BackendModel {
  readonly description: string;

  private constructor(
    private readonly model: LlamaModel,
    private readonly settings: EngineSettings,
    readonly metrics: GenerationMetrics,
  ) {
    this.description = `llamacpp (${settings.modelPath}, ${settings.parallel} parallel sequences of ${settings.contextSize} tokens)`;
  }

  static async load(context: ModelContext, llama: Llama): Promise<LlamacppModel> {
    const { name, config } = context;
    if (!config.model_transaction_policy?.decoupled) {
      throw new InferenceError('INVALID_ARG', `model '${name}': the llamacpp backend answers with a stream of responses; set model_transaction_policy { decoupled: true }`);
    }
    if (config.max_batch_size > 0) {
      throw new InferenceError('INVALID_ARG', `model '${name}': llama.cpp batches the requests itself (model.json 'parallel'); set max_batch_size to 0, not ${config.max_batch_size}`);
    }
    const settings = await readEngineSettings(name, context.modelPath, context.versionDirectory);
    try {
      await access(settings.modelPath);
    } catch {
      throw new InferenceError('UNAVAILABLE', `model '${name}': the GGUF file '${settings.modelPath}' named by model.json does not exist`);
    }
    let model: LlamaModel;
    try {
      model = await llama.loadModel({ modelPath: settings.modelPath, gpuLayers: 0 });
    } catch (error) {
      throw new InferenceError('UNAVAILABLE', `model '${name}': llama.cpp could not load '${settings.modelPath}': ${(error as Error).message}`, { cause: error });
    }
    return new LlamacppModel(model, settings, new GenerationMetrics({ model: name, version: String(context.version) }));
  }

  createInstance(_context: InstanceContext): Promise<BackendInstance> {
    return LlamacppInstance.create(this.model, this.settings, this.metrics);
  }

  async finalize(): Promise<void> {
    await this.model.dispose();
  }
}
