import type { Backend } from './backend/backend.js';
import type { ResponseCacheOptions } from './cache/response-cache.js';
import type { MetricsOptions } from './observability/metrics.js';
import type { ModelConfig } from './config/schema.js';
import type { InferenceError } from './errors.js';
import type { SequenceOptions } from './scheduling/inference-request.js';
import type { Tensor, TensorInput } from './tensor/tensor.js';

export type ModelControlMode = 'none' | 'poll' | 'explicit';

export interface ServerOptions {
  /** One repository directory or several. */
  readonly modelRepository: string | readonly string[];
  /** 'none' loads everything at start; 'poll' also follows changes; 'explicit' loads on request. Default 'none'. */
  readonly modelControlMode?: ModelControlMode;
  /** Explicit mode: models to load at start; `'*'` loads all. */
  readonly startupModels?: readonly string[];
  /** Backends to serve models with; installed official ones load on demand by name. */
  readonly backends?: readonly Backend[];
  /** Poll mode: how often to rescan the repository. Default 15 000 ms (Triton's --repository-poll-secs=15). */
  readonly pollIntervalMs?: number;
  /** Use `<model>/configs/<name>.pbtxt` in place of config.pbtxt where present (Triton's --model-config-name). */
  readonly modelConfigName?: string;
  /** How long stop() and unloading wait for in-flight work before failing it. Default 30 000 ms. */
  readonly exitTimeoutMs?: number;
  /** Start even when some models fail to load (Triton's --exit-on-error=false). Default true. */
  readonly continueOnLoadError?: boolean;
  /** Prometheus metrics (server.metrics()): their switches and registry, or false to turn them off. Default: on, with Triton's defaults. */
  readonly metrics?: MetricsOptions | false;
  /** The response cache for models whose config enables `response_cache` (Triton's --cache-config): `local` (an in-memory LRU) or `redis`. Default none. */
  readonly responseCache?: ResponseCacheOptions;
  /** Where models' log messages go (a Python model's pb_utils.Logger, say). Default: the console, without verbose messages. */
  readonly logger?: Logger;
  /**
   * The most instances one model version may have, all its instance groups together
   * (a KIND_GPU group counts once per GPU): a config asking for more fails to load with
   * INVALID_ARG before any instance starts. Default 64 (DEFAULT_MAX_INSTANCES_PER_MODEL).
   */
  readonly maxInstancesPerModel?: number;
  /** The server's name in its metadata (Triton's --id). Default 'triton', as Triton's, which clients check. */
  readonly serverId?: string;
  /**
   * How many model versions load at once (Triton's --model-load-thread-count): a version's
   * backend model, instances and warmup, or a model's auto-complete, each take a turn.
   * Default 4, as Triton's; 0 counts as 1.
   */
  readonly modelLoadThreadCount?: number;
}

/** Log messages at Triton's levels. */
export interface Logger {
  error(message: string): void;
  warn(message: string): void;
  info(message: string): void;
  verbose(message: string): void;
}

export interface InferRequest {
  readonly inputs: Readonly<Record<string, TensorInput>>;
  /** Output names to return; all when omitted. */
  readonly outputs?: readonly string[];
  /** The version to use; the highest ready one when omitted. */
  readonly modelVersion?: number;
  /** Echoed in the response, and named by errors that refuse the request. */
  readonly id?: string;
  /** A non-negative integer, for schedulers that use priorities. */
  readonly priority?: number;
  /** Triton's queue timeout (a non-negative integer): the default scheduler ignores it, as Triton's does. */
  readonly timeoutMicroseconds?: number;
  /** Aborting fails the request with CANCELLED; `AbortSignal.timeout(ms)` firing fails it with DEADLINE_EXCEEDED. */
  readonly signal?: AbortSignal;
  readonly parameters?: Readonly<Record<string, string | number | boolean>>;
  readonly sequence?: SequenceOptions;
}

/** An inference under way (InferenceServer.startInference). */
export interface RunningInference {
  readonly response: Promise<InferResponse>;
  /** Fails the request with CANCELLED at once, as aborting its signal would; nothing once it has ended. */
  cancel(): void;
}

export interface InferResponse {
  readonly id: string;
  readonly modelName: string;
  readonly modelVersion: number;
  readonly outputs: Record<string, Tensor>;
  /**
   * inferStream() only: whether the model sent this response as its last (Triton's FINAL
   * flag given with a response). A stream the model ends without a response (the flag
   * alone) has no response marked final.
   */
  readonly final?: boolean;
}

export type ModelState = 'LOADING' | 'READY' | 'UNLOADING' | 'UNAVAILABLE';

/** One row of repositoryIndex(), as Triton's repository index reports it. */
export interface ModelIndexEntry {
  readonly name: string;
  /** Undefined when the model failed before any version was chosen (for example a bad config). */
  readonly version: number | undefined;
  readonly state: ModelState;
  readonly reason: string;
}

export interface ServerEvents {
  /** A model version changed state, or a reload replaced a serving version (READY again; what it serves may differ). */
  modelStateChanged: (entry: ModelIndexEntry) => void;
  /** Poll mode: the repository could not be read (once per outage); loaded models keep serving. */
  repositoryError: (error: InferenceError) => void;
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

export interface TensorMetadata {
  readonly name: string;
  readonly datatype: string;
  readonly shape: number[];
}

export interface ModelMetadata {
  readonly name: string;
  readonly versions: string[];
  readonly platform: string;
  readonly inputs: TensorMetadata[];
  readonly outputs: TensorMetadata[];
}

export interface ServerMetadata {
  readonly name: string;
  readonly version: string;
  readonly extensions: string[];
}
