import { InferenceError } from '../errors.js';
import { validateFileNames } from './file-names.js';
import { checkInstanceCount, DEFAULT_MAX_INSTANCES_PER_MODEL } from './instance-limit.js';
import { modelConfigError } from './model-error.js';
import { normalizeModelConfig } from './normalize.js';
import { ENSEMBLE_PLATFORM, KNOWN_PLATFORMS, TENSORRT_PLATFORM, platformsOfBackend } from './platforms.js';
import type { ModelConfig, NormalizedModelConfig } from './schema.js';
import { validateEnsemble } from './validate-ensemble.js';
import { validateModelIO } from './validate-io.js';
import { validateScheduling } from './validate-scheduling.js';

/*
 * Triton's configuration rules (ValidateModelConfig, ValidateInstanceGroup,
 * ValidateModelIOConfig), applied in Triton's order to the normalized config, so the
 * first fault reported is the one Triton would report. Messages are Tritium's own and
 * name the model and the field or tensor at fault.
 */

type Fail = (message: string) => never;

function validateBackend(config: NormalizedModelConfig, fail: Fail): void {
  const { platform, backend } = config;
  if (platform === ENSEMBLE_PLATFORM) {
    if (backend) fail(`an ensemble (platform 'ensemble') must not specify a 'backend', got '${backend}'`);
    return;
  }
  if (!backend) {
    fail(
      platform
        ? `platform '${platform}' names no backend Tritium knows (known platforms: ${KNOWN_PLATFORMS.join(', ')}); specify 'backend'`
        : `must specify 'platform' or 'backend'`,
    );
  }
  const platforms = platformsOfBackend(backend);
  if (platforms && !platforms.includes(platform)) {
    fail(`'platform' '${platform}' does not go with 'backend' '${backend}' (expected ${platforms.map((name) => `'${name}'`).join(' or ')})`);
  }
}

function validateModelMetrics(config: NormalizedModelConfig, fail: Fail): void {
  config.model_metrics?.metric_control.forEach((control, i) => {
    const where = `model_metrics.metric_control[${i}]`;
    if (!control.metric_identifier) fail(`${where} must specify 'metric_identifier'`);
    if (!control.metric_identifier.family) fail(`${where}.metric_identifier must specify a non-empty 'family'`);
    if (!control.histogram_options) fail(`${where} must specify 'histogram_options'`);
    if (control.histogram_options.buckets.length === 0) fail(`${where}.histogram_options must specify non-empty 'buckets'`);
  });
}

/**
 * Instance groups as the config alone can check them; whether there are GPUs for
 * KIND_GPU is the backend's to say, at load. A group counts `count` instances on each
 * GPU it lists (model-instances.ts checks the limit again once the GPUs are known).
 */
function validateInstanceGroups(config: NormalizedModelConfig, maxInstances: number, fail: Fail): void {
  const counts = config.instance_group.map((group) => ({ name: group.name, instances: group.count * Math.max(1, group.gpus.length) }));
  checkInstanceCount(config.name, counts, maxInstances);
  for (const group of config.instance_group) {
    const where = `instance group ${group.name}`;
    if (group.kind !== 'KIND_GPU' && group.gpus.length > 0) fail(`${where} has kind ${group.kind} but specifies 'gpus' [${group.gpus.join(', ')}]`);
    const negative = group.gpus.find((id) => id < 0);
    if (negative !== undefined) fail(`${where} specifies invalid or unsupported gpu id ${negative}`);
    if (group.profile.length > 0) {
      if (config.platform !== TENSORRT_PLATFORM) fail(`${where} specifies 'profile', which only TensorRT models support`);
      const bad = group.profile.find((profile) => !/^\d+$/.test(profile));
      if (bad !== undefined) fail(`${where} specifies invalid profile '${bad}': it must be a non-negative integer`);
    }
  }
}

export interface ValidationLimits {
  /** The most instances the model's instance groups may ask for together. Default DEFAULT_MAX_INSTANCES_PER_MODEL (64). */
  readonly maxInstancesPerModel?: number;
}

/**
 * Normalizes the configuration and checks it against Triton's rules, and Tritium's own:
 * file names stay inside the model's directories, instance counts under the limit.
 * Returns the normalized config, or throws INVALID_ARG naming the model and the field at fault.
 */
export function validateModelConfig(config: ModelConfig, limits: ValidationLimits = {}): NormalizedModelConfig {
  const normalized = normalizeModelConfig(config);
  if (!normalized.name) throw new InferenceError('INVALID_ARG', `model configuration must specify 'name'`);
  const fail: Fail = (message) => {
    throw modelConfigError(normalized.name, message);
  };
  validateBackend(normalized, fail);
  if (normalized.max_batch_size < 0) fail(`'max_batch_size' must be non-negative, got ${normalized.max_batch_size}`);
  validateScheduling(normalized, fail);
  if (normalized.ensemble_scheduling) {
    if (normalized.platform !== ENSEMBLE_PLATFORM) {
      fail(`'ensemble_scheduling' can only be set for platform 'ensemble', but the platform is '${normalized.platform}'`);
    }
    validateEnsemble(normalized, normalized.ensemble_scheduling, fail);
  } else if (normalized.platform === ENSEMBLE_PLATFORM) {
    fail(`an ensemble (platform 'ensemble') must specify 'ensemble_scheduling'`);
  }
  if (normalized.model_transaction_policy.decoupled && normalized.response_cache.enable) {
    fail(`'response_cache' does not support decoupled models (model_transaction_policy.decoupled) yet; disable the response cache`);
  }
  validateModelMetrics(normalized, fail);
  validateInstanceGroups(normalized, limits.maxInstancesPerModel ?? DEFAULT_MAX_INSTANCES_PER_MODEL, fail);
  validateModelIO(normalized, fail);
  validateFileNames(normalized, fail);
  return normalized;
}
