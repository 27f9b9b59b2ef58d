import type { ModelConfig, NormalizedModelConfig } from '../config/schema.js';
import type { InferRequest, InferResponse, RunningInference } from './inference.js';

/**
 * What a model may ask of the server that loads it (Triton's BLS and model control from
 * a model): the same calls an application makes, which InferenceServer implements. It is
 * an interface of its own so that the backend contract need not import the server.
 */
export interface ModelServer {
  /** Runs one inference and resolves with its response. */
  infer(modelName: string, request: InferRequest): Promise<InferResponse>;
  /** Starts one inference, with a cancel() that fails it with CANCELLED at once. */
  startInference(modelName: string, request: InferRequest): RunningInference;
  /** Runs one inference and yields each response as it comes (a decoupled model's zero or more). */
  inferStream(modelName: string, request: InferRequest): AsyncGenerator<InferResponse, void, undefined>;
  /** Loads (or reloads) a model, optionally with a config or files of its own. */
  loadModel(name: string, options?: LoadModelOptions): Promise<void>;
  unloadModel(name: string, options?: UnloadModelOptions): Promise<void>;
  isModelReady(name: string, version?: number): Promise<boolean>;
  /** The config a model version runs with, after auto-complete and normalization. */
  modelConfig(name: string, version?: number): Promise<NormalizedModelConfig>;
}

export interface UnloadModelOptions {
  /**
   * Triton's unload_dependents: an ensemble's models are unloaded with it when no other
   * serving ensemble uses them, and so on down nested ensembles. Default false.
   */
  readonly unloadDependents?: boolean;
}

export interface LoadModelOptions {
  /**
   * Replaces the repository's config.pbtxt for this load: an object, pbtxt text, or a
   * function that makes the object when the load's turn comes (a frontend parsing a
   * client's JSON): what that function throws fails the load as an invalid override.
   */
  readonly config?: ModelConfig | string | (() => ModelConfig);
  /**
   * Triton's model file override: the model's files by path relative to its directory
   * (`1/model.onnx`), loaded from a temporary directory instead of the repository. Needs
   * `config`. The directory is removed when the model is unloaded, reloaded from elsewhere
   * or the server stops.
   */
  readonly files?: Readonly<Record<string, Uint8Array>>;
}
