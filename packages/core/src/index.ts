export { InferenceServer } from './server.js';
export { InferenceError, type InferenceErrorCode } from './errors.js';
export { VERSION } from './version.js';
export type * from './types.js';
export type * from './contract/inference.js';
export type { Logger } from './contract/logger.js';
export type { LoadModelOptions, ModelServer } from './contract/model-server.js';

export * from './config/index.js';
export * from './tensor/index.js';

export type {
  Backend,
  BackendInstance,
  BackendModel,
  BackendRequest,
  CustomMetricFamily,
  ExecuteResult,
  InstanceContext,
  InstanceHealth,
  ModelContext,
  ModelFiles,
  ResponseSender,
} from './contract/backend.js';
export { gatherBatchInput, scatterBatchOutputs } from './backend/batch.js';
export type { ModelStatistics, DurationStat, BatchStat } from './observability/statistics.js';
export { batchInputTensor, batchInputTensors, type BatchInputConfig } from './backend/batch-inputs.js';
export { controlInputNames } from './backend/control-inputs.js';
export { scatterWithInputShape } from './backend/batch-outputs.js';
export type { GatherOptions } from './backend/batch.js';
export { consoleLogger } from './console-logger.js';
export { isInsideDirectory, pathInside } from './model/path-inside.js';
export type { MetricsOptions } from './observability/metrics.js';
export type { ResponseCacheOptions } from './cache/response-cache.js';
