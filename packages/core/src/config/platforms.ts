/*
 * Triton's model frameworks: which backend serves a platform and what its model file is
 * called. Normalization fills a missing backend, platform or default_model_filename from
 * the ones given (Triton's AutoCompleteBackendFields, less what needs the model files);
 * validation checks that a platform and a framework backend agree.
 */

interface Framework {
  readonly backend: string;
  /** '' where the backend has no platform name. */
  readonly platform: string;
  readonly filename: string;
  /** Chosen when only this backend is named (TensorFlow needs its platform or files). */
  readonly isBackendDefault: boolean;
}

const FRAMEWORKS: readonly Framework[] = [
  { backend: 'tensorflow', platform: 'tensorflow_savedmodel', filename: 'model.savedmodel', isBackendDefault: false },
  { backend: 'tensorflow', platform: 'tensorflow_graphdef', filename: 'model.graphdef', isBackendDefault: false },
  { backend: 'tensorrt', platform: 'tensorrt_plan', filename: 'model.plan', isBackendDefault: true },
  { backend: 'onnxruntime', platform: 'onnxruntime_onnx', filename: 'model.onnx', isBackendDefault: true },
  { backend: 'openvino', platform: '', filename: 'model.xml', isBackendDefault: true },
  { backend: 'pytorch', platform: 'pytorch_libtorch', filename: 'model.pt', isBackendDefault: true },
  { backend: 'pytorch', platform: 'libtorch', filename: 'model.pt', isBackendDefault: false },
  { backend: 'pytorch', platform: 'torch_aoti', filename: 'model.pt2', isBackendDefault: false },
  { backend: 'python', platform: '', filename: 'model.py', isBackendDefault: true },
];

export const ENSEMBLE_PLATFORM = 'ensemble';
export const TENSORRT_PLATFORM = 'tensorrt_plan';

export interface BackendFields {
  name: string;
  platform: string;
  backend: string;
  default_model_filename: string;
}

/** One framework among candidates, if they come down to one (or to one backend default). */
function pick(candidates: readonly Framework[]): Framework | undefined {
  if (candidates.length === 1) return candidates[0];
  const defaults = candidates.filter((framework) => framework.isBackendDefault);
  return defaults.length === 1 ? defaults[0] : undefined;
}

/** Fills backend, platform and default_model_filename where the others decide them. */
export function completeBackendFields(config: BackendFields): void {
  const { platform, backend, default_model_filename: filename } = config;
  const named = FRAMEWORKS.filter((framework) => (!platform || framework.platform === platform) && (!backend || framework.backend === backend));
  // The file name narrows the choice when it is a framework's own; a custom name does not.
  const byFile = named.filter((framework) => framework.filename === filename);
  const framework = pick(byFile.length ? byFile : named);
  if (framework) {
    config.backend ||= framework.backend;
    config.platform ||= framework.platform;
    config.default_model_filename ||= framework.filename;
  } else if (!platform && !backend && !filename && config.name.includes('.')) {
    // Triton's custom-backend convention: a model named "<anything>.<backend>".
    config.backend = config.name.slice(config.name.indexOf('.') + 1);
    config.default_model_filename = `model.${config.backend}`;
  }
}

/** Each backend's default model file, to recognise a model that has no config. */
export const BACKEND_MODEL_FILES: ReadonlyArray<{ readonly backend: string; readonly filename: string }> = FRAMEWORKS.filter(
  (framework) => framework.isBackendDefault,
).map(({ backend, filename }) => ({ backend, filename }));

/** The platforms that name a framework backend, or undefined for a backend without platforms. */
export function platformsOfBackend(backend: string): string[] | undefined {
  const platforms = FRAMEWORKS.filter((framework) => framework.backend === backend && framework.platform).map((framework) => framework.platform);
  return platforms.length ? platforms : undefined;
}

/** Every platform name Triton knows, for messages. */
export const KNOWN_PLATFORMS: readonly string[] = [...FRAMEWORKS.map((framework) => framework.platform).filter(Boolean), ENSEMBLE_PLATFORM];
