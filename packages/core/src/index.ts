/*
 * `@tritium/core`: the face of core for applications (docs/api.md). The server, its
 * options, requests and responses, errors, and the tensor and config helpers an
 * application uses. Backend authors import `@tritium/core/backend` (backend-api.ts); the
 * values both faces export are the same objects. Each name is listed on purpose: nothing
 * else of core's sources is public.
 */

// The server, what it takes and what it answers.
export { InferenceServer } from './server.js';
export { InferenceError, type InferenceErrorCode } from './errors.js';
export { VERSION } from './version.js';
export { TRITIUM_WARNINGS, type TritiumWarningCode } from './warnings.js';
export type {
  ModelControlMode,
  ModelIndexEntry,
  ModelMetadata,
  ModelState,
  ObjectStorageOptions,
  ServerEvents,
  ServerMetadata,
  ServerOptions,
  TensorMetadata,
} from './types.js';
export type { InferRequest, InferResponse, RunningInference, SequenceOptions } from './contract/inference.js';
export type { LoadModelOptions, UnloadModelOptions } from './contract/model-server.js';
export type { RepositoryAgent, RepositoryAgentAction, RepositoryAgentModel } from './repository-agents/repository-agent.js';
export { checksumAgent } from './repository-agents/checksum-agent.js';
export type { ModelFacts } from './model/model-facts.js';
export type { Logger } from './contract/logger.js';
export { ServerLogger, type ServerLoggerOptions } from './observability/server-logger.js';
export { DEFAULT_LOG_SETTINGS, type LogFormat, type LogSettings } from './observability/log-settings.js';
export type { RateLimitMode, RateLimitOptions, RateLimitResource } from './scheduling/rate-limiter.js';
export { CallerTrace, type CallerActivity, type CallerTraceOptions } from './observability/caller-trace.js';
export { DEFAULT_TRACE_SETTINGS, type TraceLevel, type TraceMode, type TraceSettingChanges, type TraceSettings, type TraceStartupSettings } from './observability/trace-settings.js';
export type { OpenTelemetrySettings } from './observability/open-telemetry-settings.js';
/** The type of `ServerOptions.backends`; writing one is `@tritium/core/backend`'s business. */
export type { Backend } from './contract/backend.js';
export type { BatchStat, DurationStat, ModelStatistics } from './observability/statistics.js';
export type { MetricsOptions } from './observability/metrics.js';
// The request lifecycle on node:diagnostics_channel (docs/trace.md): channel names and message types.
export {
  REQUEST_CHANNELS,
  type ExecutionView,
  type RequestComputeMessage,
  type RequestEndMessage,
  type RequestErrorMessage,
  type RequestQueueMessage,
  type RequestStageMessage,
  type RequestView,
} from './observability/request-channels.js';
// For frontends: whether to make a CallerTrace for a request they take.
export { isObservingRequests } from './observability/request-observers.js';
export type { ResponseCacheOptions } from './cache/response-cache.js';

// Model configs: config.pbtxt text ⇄ objects, Triton's defaults and rules, the JSON form (both ways).
export { parseModelConfig } from './config/text-format.js';
export { printModelConfig } from './config/text-format-printer.js';
export { validateModelConfig } from './config/validate.js';
export { modelConfigToJson } from './config/json.js';
export { modelConfigFromJson } from './config/from-json.js';
export type {
  DynamicBatching,
  EnsembleScheduling,
  InstanceGroup,
  InstanceGroupKind,
  ModelConfig,
  ModelInput,
  ModelOutput,
  ModelWarmup,
  NormalizedDynamicBatching,
  NormalizedEnsembleScheduling,
  NormalizedInstanceGroup,
  NormalizedModelConfig,
  NormalizedModelInput,
  NormalizedModelOutput,
  NormalizedQueuePolicy,
  NormalizedSequenceBatching,
  QueuePolicy,
  SequenceBatching,
  SequenceControlKind,
  VersionPolicy,
} from './config/schema.js';

// Tensors and data types.
export type { Tensor, TensorInput } from './tensor/tensor.js';
export {
  DATA_TYPES,
  dataTypeFromConfig,
  dataTypeToConfig,
  elementByteSize,
  isDataType,
  typedArrayConstructor,
  type BytesElement,
  type DataType,
  type TensorData,
  type TypedTensorData,
} from './tensor/datatype.js';
export { elementCount, shapeToString } from './tensor/shape.js';
export { createTensorData, tensorBytes, tensorFromBytes } from './tensor/data.js';
export { bytesElementToString, deserializeBytesTensor, serializeBytesTensor } from './tensor/bytes.js';
export { fromBf16, fromFp16, toBf16, toFp16 } from './tensor/half.js';
