/*
 * `@tritium/core/backend`: the face of core for backend authors (docs/backends.md). The
 * contract a backend implements, the types it sees, and the helpers every backend shares
 * (batching, tensors, config parameters, file confinement). Applications import
 * `@tritium/core` (index.ts) instead; the values both faces export are the same objects.
 * Each name is listed on purpose: nothing else of core's sources is public.
 */

// The contract: Backend → BackendModel → BackendInstance, and what each receives.
export type {
  Backend,
  BackendInstance,
  BackendModel,
  BackendRequest,
  CustomHistogramValue,
  CustomMetric,
  CustomMetricFamily,
  ExecuteResult,
  ExecutionReport,
  InstanceContext,
  InstanceHealth,
  ModelContext,
  ModelFiles,
  ResponseSender,
} from './contract/backend.js';
export type { LoadModelOptions, ModelServer, UnloadModelOptions } from './contract/model-server.js';
export type { InferRequest, InferResponse, RunningInference, SequenceOptions } from './contract/inference.js';
export type { Logger } from './contract/logger.js';
export { InferenceError, type InferenceErrorCode } from './errors.js';

// A request a model makes while it executes one (BLS), traced as that request's child.
export { startChildRequest } from './observability/request-publishing.js';

// Warnings to the user, each with a code users can filter (docs/warnings.md).
export { emitTritiumWarning, type TritiumWarningCode } from './warnings.js';

// Batches: join requests' inputs, split outputs back, Triton's batch_input/batch_output.
export { gatherBatchInput, scatterBatchOutputs, type GatherOptions } from './backend/batch.js';
export { batchInputTensors, type BatchInputConfig } from './backend/batch-inputs.js';
export { scatterWithInputShape } from './backend/batch-outputs.js';
export { controlInputNames } from './backend/control-inputs.js';

// Files a config names, kept inside the model's directories.
export { isInsideDirectory, pathInside } from './model/path-inside.js';

// The config a model runs with: its parameters, defaults a backend applies, the JSON form.
export { booleanParameter, choiceParameter, integerParameter, invalidParameter, modelParameter } from './config/parameters.js';
export { withDefaultBatcher } from './config/default-batcher.js';
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
export { elementCount, mapVariableDims, shapeMatches, shapeToString } from './tensor/shape.js';
export { createTensorData, tensorBytes, tensorFromBytes } from './tensor/data.js';
export { bytesElementToString, deserializeBytesTensor, serializeBytesTensor } from './tensor/bytes.js';
export { fromBf16, fromFp16, toBf16, toFp16 } from './tensor/half.js';
