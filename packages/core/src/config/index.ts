/*
 * The model-configuration layer: config.pbtxt text ⇄ ModelConfig objects (protobuf text
 * format against a zod mirror of Triton's model_config.proto), Triton's defaults, its
 * validation rules, and the JSON form of its model-config endpoint (and of its load API).
 */
export { parseModelConfig } from './text-format.js';
export { printModelConfig } from './text-format-printer.js';
export { normalizeModelConfig } from './normalize.js';
export { validateModelConfig, type ValidationLimits } from './validate.js';
export { DEFAULT_MAX_INSTANCES_PER_MODEL } from './instance-limit.js';
export { withDefaultBatcher } from './default-batcher.js';
export { booleanParameter, integerParameter, invalidParameter, modelParameter } from './parameters.js';
export { modelConfigToJson, type JsonValue } from './json.js';
export { modelConfigFromJson } from './from-json.js';
export {
  ModelConfigSchema,
  type DataTypeName,
  type DynamicBatching,
  type EnsembleScheduling,
  type InstanceGroup,
  type InstanceGroupKind,
  type ModelConfig,
  type ModelInput,
  type ModelOutput,
  type ModelWarmup,
  type NormalizedDynamicBatching,
  type NormalizedEnsembleScheduling,
  type NormalizedInstanceGroup,
  type NormalizedModelConfig,
  type NormalizedModelInput,
  type NormalizedModelOutput,
  type NormalizedQueuePolicy,
  type NormalizedSequenceBatching,
  type QueuePolicy,
  type SequenceBatching,
  type SequenceControlKind,
  type VersionPolicy,
} from './schema.js';
