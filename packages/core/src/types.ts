import type { ResponseCacheOptions } from './cache/response-cache.js';
import type { Backend } from './contract/backend.js';
import type { Logger } from './contract/logger.js';
import type { InferenceError } from './errors.js';
import type { MetricsOptions } from './observability/metrics.js';
import type { TraceStartupSettings } from './observability/trace-settings.js';
import type { RateLimitOptions } from './scheduling/rate-limiter.js';
import type { RepositoryAgent } from './repository-agents/repository-agent.js';

export type ModelControlMode = 'none' | 'poll' | 'explicit';

export interface ServerOptions {
  /** One repository or several: a directory, `s3://[host:port/]bucket/path` or `as://account/container/path` (docs/object-storage.md). */
  readonly modelRepository: string | readonly string[];
  /** Where `s3://` and `as://` repositories are copied to, and the largest object one may hold (docs/object-storage.md). */
  readonly objectStorage?: ObjectStorageOptions;
  /** 'none' loads everything at start; 'poll' also follows changes; 'explicit' loads on request. Default 'none'. */
  readonly modelControlMode?: ModelControlMode;
  /** Explicit mode: models to load at start; `'*'` loads all. */
  readonly startupModels?: readonly string[];
  /** Backends to serve models with; installed official ones load on demand by name. */
  readonly backends?: readonly Backend[];
  /**
   * Settings for the official backends loaded by name (Triton's `--backend-config`), keyed
   * by backend name: each entry reaches that backend's package as the options of its
   * factory, e.g. `{ onnxruntime: { defaultMaxBatchSize: 8 }, python: { interpreter: '/opt/py/bin/python3' } }`
   * (see docs/backends.md). A backend passed in `backends` is already made and takes none.
   */
  readonly backendSettings?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
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
  /**
   * The server's log (its own messages and models', a Python model's pb_utils.Logger
   * among them). A ServerLogger is used as it is: its settings are the server's
   * (server.logSettings()). Any other Logger receives what the server's log settings let
   * through, starting from Triton's defaults (verbose off). Default: the console.
   */
  readonly logger?: Logger;
  /**
   * The most instances one model version may have, all its instance groups together
   * (a KIND_GPU group counts once per GPU): a config asking for more fails to load with
   * INVALID_ARG before any instance starts. Default 64 (DEFAULT_MAX_INSTANCES_PER_MODEL).
   */
  readonly maxInstancesPerModel?: number;
  /**
   * The global trace settings the server starts with (Triton's --trace-config), also what
   * a cleared global setting returns to, and the trace mode: 'triton' (trace files) or
   * 'opentelemetry' (spans exported over OTLP/HTTP, with `opentelemetry`'s settings).
   * Default: mode 'triton', tracing OFF, rate 1000, count -1, no file.
   */
  readonly trace?: TraceStartupSettings;
  /** The server's name in its metadata (Triton's --id). Default 'triton', as Triton's, which clients check. */
  readonly serverId?: string;
  /**
   * How many model versions load at once (Triton's --model-load-thread-count): a version's
   * backend model, instances and warmup, or a model's auto-complete, each take a turn.
   * Default 4, as Triton's; 0 counts as 1.
   */
  readonly modelLoadThreadCount?: number;
  /**
   * Triton's rate limiter (--rate-limit, --rate-limit-resource): with mode
   * `execution_count`, an instance runs only once the resources its instance_group's
   * `rate_limiter` block names are free, and waiting instances take turns by priority.
   * Default `off`: rate_limiter blocks are ignored (docs/batching.md).
   */
  readonly rateLimit?: RateLimitOptions;
  /**
   * Triton's --strict-readiness. true (the default): isReady() needs every model asked for
   * ready; false: the server is ready while it is live, whatever its models' states.
   */
  readonly strictReadiness?: boolean;
  /** Triton's --model-load-retry-count: how many times a version's failed load is tried again before the load fails. Default 0. */
  readonly modelLoadRetryCount?: number;
  /**
   * Repository agents a config's `model_repository_agents` may name, besides the built-in
   * `checksum` (an agent of the same name replaces it). docs/model-repository.md.
   */
  readonly repositoryAgents?: readonly RepositoryAgent[];
}

export interface ObjectStorageOptions {
  /**
   * The local cache that object-storage models are downloaded into, kept across restarts.
   * Default: TRITON_AWS_MOUNT_DIRECTORY (S3) or TRITON_AZURE_MOUNT_DIRECTORY (Azure) when set, else `tritium-object-storage` under the OS temp directory.
   */
  readonly cacheDirectory?: string;
  /** The largest object a model may hold: a larger one fails the model's load, naming the object. Default 8 GiB. */
  readonly maxObjectBytes?: number;
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
  /** stop() began: from now on the server is neither live nor ready (health watchers read it again). */
  stopping: () => void;
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
