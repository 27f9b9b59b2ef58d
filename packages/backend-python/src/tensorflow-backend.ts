import { fileURLToPath } from 'node:url';
import { InferenceError, withDefaultBatcher, type Backend, type BackendModel, type ModelConfig, type ModelContext, type ModelFiles } from '@tritium/core/backend';
import { CustomMetrics } from './custom-metrics.js';
import { arenaSizesOf, autoComplete, requireModelFile, requireSharedMemory, type PythonBackendOptions } from './python-backend.js';
import { environmentOptions, pythonEnvironment, type PythonEnvironment } from './python-environment.js';
import { PythonInstance } from './python-instance.js';

/** The Python model that runs a SavedModel in the stub (python/tensorflow_savedmodel/model.py). */
const SAVEDMODEL_RUNNER = fileURLToPath(new URL('../python/tensorflow_savedmodel/model.py', import.meta.url));
/** How the runner learns which SavedModel directory to load. */
const SAVEDMODEL_PATH_VARIABLE = 'TRITIUM_SAVEDMODEL_PATH';
const SAVEDMODEL_PLATFORM = 'tensorflow_savedmodel';
/** How the runner learns the max_batch_size auto-complete gives a model that batches. */
const DEFAULT_MAX_BATCH_SIZE_VARIABLE = 'TRITIUM_TF_DEFAULT_MAX_BATCH_SIZE';

export interface TensorflowBackendOptions extends PythonBackendOptions {
  /** Triton's `--backend-config=tensorflow,default-max-batch-size`: what auto-complete sets for a model that batches (default 4). */
  readonly defaultMaxBatchSize?: number;
}

/**
 * Triton's TensorFlow backend for SavedModels (`platform: "tensorflow_savedmodel"`,
 * `model.savedmodel/`), run by TensorFlow in a Python stub: one stub per instance, as
 * Python models are. Triton dropped its own TensorFlow backend after 25.03.
 */
export function tensorflowBackend(options: TensorflowBackendOptions = {}): Backend {
  const { defaultMaxBatchSize = 4 } = options;
  if (!Number.isSafeInteger(defaultMaxBatchSize) || defaultMaxBatchSize < 0) {
    throw new InferenceError('INVALID_ARG', `tensorflow backend: defaultMaxBatchSize must be a non-negative integer, not ${defaultMaxBatchSize}`);
  }
  const environmentChoice = environmentOptions(options);
  // Importing TensorFlow and loading a model takes seconds.
  const startTimeoutMs = options.startTimeoutMs ?? 120_000;
  const finalizeTimeoutMs = options.finalizeTimeoutMs ?? 5_000;
  const arenaSizes = arenaSizesOf('tensorflow', options);
  const metrics = new CustomMetrics();

  /** The model's interpreter, told where its SavedModel is. */
  const environmentFor = async (config: ModelConfig, files: ModelFiles): Promise<PythonEnvironment> => {
    requireSavedModelPlatform(config);
    requireSharedMemory(config.name ?? '');
    const environment = await pythonEnvironment(config, files.modelDirectory, environmentChoice);
    const env = { ...environment.env, [SAVEDMODEL_PATH_VARIABLE]: files.modelPath, [DEFAULT_MAX_BATCH_SIZE_VARIABLE]: String(defaultMaxBatchSize) };
    return { ...environment, env };
  };

  return {
    name: 'tensorflow',
    platforms: [SAVEDMODEL_PLATFORM],
    defaultModelFilename: 'model.savedmodel',

    async autoCompleteConfig(config: ModelConfig, files: ModelFiles): Promise<ModelConfig> {
      const named = { ...config, backend: 'tensorflow', platform: config.platform || SAVEDMODEL_PLATFORM };
      if (isComplete(named)) return withDefaultBatcher(named);
      await requireModelFile(config.name ?? '', files.modelPath);
      const label = `model '${config.name}'`;
      const spec = { environment: await environmentFor(named, files), modelFile: SAVEDMODEL_RUNNER, label, startTimeoutMs, arenaSizes };
      return withDefaultBatcher(await autoComplete(named, spec));
    },

    async createModel(context: ModelContext): Promise<BackendModel> {
      requireNoCpuAccelerator(context.config);
      await requireModelFile(context.name, context.modelPath);
      const environment = await environmentFor(context.config, context);
      const instanceOptions = { environment, modelFile: SAVEDMODEL_RUNNER, metrics, startTimeoutMs, arenaSizes, finalizeTimeoutMs };
      return {
        description: `tensorflow savedmodel (${environment.interpreter})`,
        createInstance: (instance) => PythonInstance.create(context, instance, instanceOptions),
      };
    },
  };
}

/**
 * Nothing for the signature to fill: inputs and outputs listed with types and dims, and a
 * max_batch_size set (0 is ambiguous in Triton: the listed dims decide it against the model).
 */
function isComplete(config: ModelConfig): boolean {
  const tensors = [...(config.input ?? []), ...(config.output ?? [])];
  const listed = (config.input?.length ?? 0) > 0 && (config.output?.length ?? 0) > 0;
  return listed && (config.max_batch_size ?? 0) > 0 && tensors.every((tensor) => tensor.data_type && tensor.dims !== undefined);
}

/** Triton's TensorFlow backend refuses CPU execution accelerators (GPU ones only apply to GPU instances). */
function requireNoCpuAccelerator(config: ModelConfig): void {
  const accelerators = config.optimization?.execution_accelerators?.cpu_execution_accelerator ?? [];
  if (accelerators.length > 0) {
    throw new InferenceError(
      'INVALID_ARG',
      `model '${config.name}': CPU execution accelerators (${accelerators.map((a) => a.name).join(', ')}) are not supported by the tensorflow backend`,
    );
  }
}

function requireSavedModelPlatform(config: ModelConfig): void {
  if (config.platform && config.platform !== SAVEDMODEL_PLATFORM) {
    throw new InferenceError(
      'UNSUPPORTED',
      `model '${config.name}': platform '${config.platform}' is not served by the tensorflow backend, only '${SAVEDMODEL_PLATFORM}': convert the model to a SavedModel`,
    );
  }
}
