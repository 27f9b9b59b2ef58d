import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { BackendRegistry } from '../backend/registry.js';
import { parseModelConfig, validateModelConfig, type ValidationLimits } from '../config/index.js';
import { modelConfigError } from '../config/model-error.js';
import { completeBackendFields, ENSEMBLE_PLATFORM, type BackendFields } from '../config/platforms.js';
import type { ModelConfig, NormalizedModelConfig } from '../config/schema.js';
import type { Backend, ModelFiles } from '../contract/backend.js';
import type { LoadModelOptions } from '../contract/model-server.js';
import { InferenceError } from '../errors.js';
import { readConfigText } from '../repository/model-repository.js';
import type { ModelSource } from '../repository/model-source.js';
import { selectVersions } from '../repository/version-policy.js';
import { ENSEMBLE_BACKEND } from '../scheduling/ensemble-scheduler.js';
import { pathInside } from './path-inside.js';

export interface ResolvedModel {
  readonly config: NormalizedModelConfig;
  readonly backend: Backend;
  /** Files of each version the version policy selects. */
  readonly versions: readonly ModelFiles[];
  /** Versions the policy names that have no directory. */
  readonly missingVersions: readonly number[];
}

/**
 * Turns a model directory (and an optional config override) into a validated config,
 * the backend that serves it and the versions to load: read/parse the config, pick the
 * backend (from `backend`/`platform`, or from the model file when there is no config),
 * let the backend auto-complete, then normalize and validate. The model file must lie
 * inside its version directory (a config override comes from a client).
 */
export async function resolveModel(
  source: ModelSource,
  override: ConfigOverride | undefined,
  registry: BackendRegistry,
  limits: ValidationLimits,
): Promise<ResolvedModel> {
  let config = await readConfig(source, override);
  if (config.name && config.name !== source.name) {
    throw modelConfigError(source.name, `config names the model '${config.name}'; it must match the directory name`);
  }
  config = { ...config, name: source.name };
  // The policy comes from the config as written: auto-complete does not change it.
  const selection = selectVersions(config.version_policy, source.versions);
  if (selection.versions.length === 0) {
    throw new InferenceError('UNAVAILABLE', `model '${source.name}': no version directory to serve under its version policy (found ${source.versions.length ? source.versions.join(', ') : 'none'})`);
  }
  // An ensemble has no backend of its own: its scheduler runs the steps' models.
  if (config.platform === ENSEMBLE_PLATFORM) {
    const files = await Promise.all(selection.versions.map((version) => modelFiles(source, '', version)));
    return { config: validateModelConfig(config, limits), backend: ENSEMBLE_BACKEND, versions: files, missingVersions: selection.missing };
  }
  const backendName = await chooseBackend(config, source, selection.versions, registry);
  const backend = await registry.get(backendName).catch((error: InferenceError) => {
    throw new InferenceError(error.code, `model '${source.name}': ${error.message}`, { cause: error });
  });
  config = { ...config, backend: backendName };
  // A file the config names, or its platform's (torch_aoti: model.pt2); else the backend's own; else Triton's for that backend.
  const filename =
    config.default_model_filename ||
    (config.platform ? frameworkFields(config).default_model_filename : '') ||
    backend.defaultModelFilename ||
    frameworkFields(config).default_model_filename ||
    '';
  const files = await Promise.all(selection.versions.map((version) => modelFiles(source, filename, version)));
  if (backend.autoCompleteConfig) {
    try {
      config = await backend.autoCompleteConfig(config, files[files.length - 1]!);
    } catch (error) {
      throw InferenceError.from(error, 'INVALID_ARG', `model '${source.name}': auto-complete`);
    }
  }
  return { config: validateModelConfig(config, limits), backend, versions: files, missingVersions: selection.missing };
}

/** A config replacing config.pbtxt for one load (LoadModelOptions.config). */
export type ConfigOverride = NonNullable<LoadModelOptions['config']>;

/** The config a load uses, as written: the override, else the source's config file (none: just the name, for auto-complete). */
export async function readConfig(source: ModelSource, override: ConfigOverride | undefined): Promise<ModelConfig> {
  if (override === undefined) {
    if (!source.configPath) return { name: source.name };
    return parseModelConfig(await readConfigText(source.configPath), source.configPath);
  }
  try {
    if (typeof override === 'string') return parseModelConfig(override, `config override for '${source.name}'`);
    return typeof override === 'function' ? override() : override;
  } catch (error) {
    // Triton's words for an override it cannot read; the reason follows.
    const failure = InferenceError.from(error, 'INVALID_ARG');
    throw new InferenceError(failure.code, `Invalid config override: ${failure.message}`, { cause: error });
  }
}

async function modelFiles(source: ModelSource, filename: string, version: number): Promise<ModelFiles> {
  const versionDirectory = join(source.directory, String(version));
  const modelPath = filename ? await pathInside(versionDirectory, filename, `model '${source.name}': default_model_filename`) : versionDirectory;
  return { modelDirectory: source.directory, versionDirectory, modelPath, version };
}

/**
 * Triton's order for picking a backend: the `backend` field; what the platform or the
 * model file name says; a model file a backend knows in the version directory; last,
 * the `<name>.<backend>` naming convention (the framework table applies both).
 */
async function chooseBackend(config: ModelConfig, source: ModelSource, versions: readonly number[], registry: BackendRegistry): Promise<string> {
  if (config.backend) return config.backend;
  if (config.platform || config.default_model_filename) {
    const derived = frameworkFields(config).backend;
    if (derived) return derived;
  }
  const latest = join(source.directory, String(versions[versions.length - 1]));
  const present = new Set(await readdir(latest).catch(() => [] as string[]));
  for (const candidate of await registry.candidates()) {
    if (present.has(candidate.filename)) return candidate.name;
  }
  const byName = frameworkFields(config).backend;
  if (byName) return byName;
  throw new InferenceError(
    'INVALID_ARG',
    `model '${source.name}': the config names no backend or platform, and no known model file is in '${latest}'`,
  );
}

/** Triton's framework table applied to a copy of the config's backend fields. */
function frameworkFields(config: ModelConfig): BackendFields {
  const fields = {
    name: config.name ?? '',
    platform: config.platform ?? '',
    backend: config.backend ?? '',
    default_model_filename: config.default_model_filename ?? '',
  };
  completeBackendFields(fields);
  return fields;
}
