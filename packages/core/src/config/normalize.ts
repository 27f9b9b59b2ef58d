import { formatPath } from './descriptor.js';
import { modelConfigError } from './model-error.js';
import { completeBackendFields } from './platforms.js';
import {
  InstanceGroupSchema,
  ModelConfigSchema,
  OptimizationSchema,
  type ModelConfig,
  type NormalizedInstanceGroup,
  type NormalizedModelConfig,
} from './schema.js';

/*
 * Fills the defaults Triton's core fills before it validates a configuration
 * (AutoCompleteBackendFields without model files, NormalizeModelConfig,
 * NormalizeInstanceGroup), on top of the proto3 defaults the schema supplies.
 * Instance groups resolve as on a machine without GPUs (only a backend knows of any):
 * the default group is KIND_CPU (see normalizeInstanceGroups).
 */

/** Triton's SEQUENCE_IDLE_DEFAULT_MICROSECONDS. */
const SEQUENCE_IDLE_DEFAULT_MICROSECONDS = 1_000_000;
/** Backends that get two CPU instances by default (Triton's SetDefaultInstanceCount). */
const TWO_CPU_INSTANCE_BACKENDS = new Set(['onnxruntime', 'tensorflow']);

/** The model name of something that may not be a config at all, for messages. */
function nameOf(config: unknown): string {
  const name = typeof config === 'object' && config !== null ? (config as { name?: unknown }).name : undefined;
  return typeof name === 'string' ? name : '';
}

/** Checks the object against the schema and fills every proto3 default. */
function withProtoDefaults(config: ModelConfig): NormalizedModelConfig {
  const result = ModelConfigSchema.safeParse(config);
  if (result.success) return result.data;
  const issues = result.error.issues.slice(0, 3).map((issue) => `${formatPath(issue.path) || 'config'}: ${issue.message}`);
  throw modelConfigError(nameOf(config), `invalid configuration: ${issues.join('; ')}`);
}

/**
 * One group named after the model when there is none; unnamed groups become
 * `<model>_<index>`; counts below 1 get Triton's default. KIND_AUTO becomes KIND_CPU, as
 * the proto documents for GPUs that are not there: normalization happens before the
 * backend is known, so a backend's GPUs are not considered (Triton would use them).
 * Triton would keep the group's `gpus` and then refuse it; Tritium drops them, so a
 * repository written for a GPU machine (`gpus: [0]`, no kind) runs on the CPU. KIND_GPU
 * stays as written, for the backend to place at load (model-instances.ts).
 */
function normalizeInstanceGroups(config: NormalizedModelConfig): void {
  if (config.instance_group.length === 0) config.instance_group.push(InstanceGroupSchema.parse({ name: config.name }));
  config.instance_group.forEach((group: NormalizedInstanceGroup, index) => {
    group.name ||= `${config.name}_${index}`;
    if (group.kind === 'KIND_AUTO') {
      group.kind = 'KIND_CPU';
      group.gpus = [];
    }
    if (group.count < 1) group.count = group.kind === 'KIND_CPU' && TWO_CPU_INSTANCE_BACKENDS.has(config.backend) ? 2 : 1;
  });
}

/**
 * Returns a copy of the configuration with Triton's defaults filled in. Throws
 * INVALID_ARG when the object does not match the schema (wrong types, unknown fields).
 */
export function normalizeModelConfig(config: ModelConfig): NormalizedModelConfig {
  const normalized = withProtoDefaults(config);
  completeBackendFields(normalized);
  normalized.version_policy ??= { latest: { num_versions: 1 } };

  const maxBatchSize = normalized.max_batch_size;
  const dynamic = normalized.dynamic_batching;
  if (dynamic && dynamic.preferred_batch_size.length === 0 && maxBatchSize > 0) dynamic.preferred_batch_size.push(maxBatchSize);
  const sequence = normalized.sequence_batching;
  if (sequence) {
    if (sequence.max_sequence_idle_microseconds === 0) sequence.max_sequence_idle_microseconds = SEQUENCE_IDLE_DEFAULT_MICROSECONDS;
    const oldest = sequence.oldest;
    if (oldest && oldest.preferred_batch_size.length === 0 && maxBatchSize > 0) oldest.preferred_batch_size.push(maxBatchSize);
  }

  // Instance groups and optimization do not apply to ensembles (validation refuses them).
  if (!normalized.ensemble_scheduling) {
    const optimization = (normalized.optimization ??= OptimizationSchema.parse({}));
    optimization.input_pinned_memory ??= { enable: true };
    optimization.output_pinned_memory ??= { enable: true };
    normalizeInstanceGroups(normalized);
  }
  return normalized;
}
