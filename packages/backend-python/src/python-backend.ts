import { access, readFile } from 'node:fs/promises';
import { InferenceError, modelConfigToJson, type Backend, type BackendModel, type ModelConfig, type ModelContext, type ModelFiles } from '@tritium/core/backend';
import { CustomMetrics } from './custom-metrics.js';
import { fromFrameError } from './frame-error.js';
import { loadSharedMemoryAddon } from './native.js';
import { environmentOptions, pythonEnvironment } from './python-environment.js';
import { PythonInstance, type PythonInstanceOptions } from './python-instance.js';
import { StubProcess, type ArenaSizes, type StubSpec } from './stub-process.js';

const MiB = 1 << 20;

export interface PythonBackendOptions {
  /** The interpreter for models without an environment of their own (EXECUTION_ENV_PATH). Default `python3` on PATH. */
  readonly interpreter?: string;
  /**
   * Directories where a model's EXECUTION_ENV_PATH may lie besides the model's own
   * directory (links resolved), e.g. a shared `/opt/envs`. Default none: a model's
   * config may come from a client, and may then only use environments in its model.
   */
  readonly executionEnvironmentRoots?: readonly string[];
  /** How long a stub may take to import numpy and the model file (Triton's stub-timeout-seconds). Default 60 000 ms. */
  readonly startTimeoutMs?: number;
  /**
   * Triton's shm-default-byte-size: the first shared-memory region of each stub's arenas
   * (one for tensors Node sends, one for the stub's), at least 1 MiB. Default 1 MiB.
   */
  readonly sharedMemoryDefaultBytes?: number;
  /**
   * Triton's shm-growth-byte-size: a full arena's next region is the last one plus whole
   * steps of this size, one more than the tensors need. Default: each region twice the last.
   */
  readonly sharedMemoryGrowthBytes?: number;
  /** How long an instance waits for the model's finalize() before killing its stub. Default 5 000 ms. */
  readonly finalizeTimeoutMs?: number;
  /** Where packed (.tar.gz) environments are unpacked. Default `<tmpdir>/tritium-python-envs`. */
  readonly environmentCacheDirectory?: string;
}

/**
 * Triton's Python backend: serves `backend: "python"` models (`model.py` with a
 * `TritonPythonModel` class) unmodified, one stub process per instance, tensors through
 * shared memory.
 */
export function pythonBackend(options: PythonBackendOptions = {}): Backend {
  const environment = environmentOptions(options);
  const startTimeoutMs = options.startTimeoutMs ?? 60_000;
  const finalizeTimeoutMs = options.finalizeTimeoutMs ?? 5_000;
  const arenaSizes = arenaSizesOf('python', options);
  const customMetrics = new CustomMetrics();
  const environmentFor = (config: ModelConfig, files: ModelFiles) => pythonEnvironment(config, files.modelDirectory, environment);

  return {
    name: 'python',
    defaultModelFilename: 'model.py',
    // The families Python models define (pb_utils.MetricFamily), for server.metrics().
    customMetrics: () => customMetrics.snapshot(),

    async autoCompleteConfig(config: ModelConfig, files: ModelFiles): Promise<ModelConfig> {
      const completed = { ...config, backend: 'python' };
      // Starting a stub costs a Python start and a numpy import: only for models that define the hook.
      const source = await readFile(files.modelPath, 'utf8').catch(() => '');
      if (!source.includes('auto_complete_config')) return completed;
      requireSharedMemory(config.name ?? '');
      return autoComplete(completed, { environment: await environmentFor(config, files), modelFile: files.modelPath, label: `model '${config.name}'`, startTimeoutMs, arenaSizes });
    },

    async createModel(context: ModelContext): Promise<BackendModel> {
      requireSharedMemory(context.name);
      await requireModelFile(context.name, context.modelPath);
      const instanceOptions: PythonInstanceOptions = {
        environment: await environmentFor(context.config, context),
        modelFile: context.modelPath,
        metrics: customMetrics,
        startTimeoutMs,
        arenaSizes,
        finalizeTimeoutMs,
      };
      return {
        description: `python (${instanceOptions.environment.interpreter})`,
        createInstance: (instance) => PythonInstance.create(context, instance, instanceOptions),
      };
    },
  };
}

/** The arena sizes the options ask for, refused as Triton refuses its shm-*-byte-size settings. */
export function arenaSizesOf(backend: string, options: PythonBackendOptions): ArenaSizes {
  const { sharedMemoryDefaultBytes: firstBytes = MiB, sharedMemoryGrowthBytes: growthBytes } = options;
  // Triton's check is 1 MiB; its message says "4 MiBs", a leftover of an older limit.
  if (!Number.isSafeInteger(firstBytes) || firstBytes < MiB) {
    throw new InferenceError('INVALID_ARG', `${backend} backend: sharedMemoryDefaultBytes (shm-default-byte-size) can't be smaller than 1 MiB (${MiB} bytes), not ${firstBytes}`);
  }
  if (growthBytes !== undefined && (!Number.isSafeInteger(growthBytes) || growthBytes <= 0)) {
    throw new InferenceError('INVALID_ARG', `${backend} backend: sharedMemoryGrowthBytes (shm-growth-byte-size) can't be smaller than or equal to zero, not ${growthBytes}`);
  }
  return { firstBytes, growthBytes };
}

export function requireSharedMemory(model: string): void {
  try {
    loadSharedMemoryAddon();
  } catch (error) {
    throw new InferenceError('UNAVAILABLE', `model '${model}': ${(error as Error).message}`);
  }
}

/** Runs the model's auto_complete_config in a stub of its own (no instance exists yet), as Triton does before loading. */
export async function autoComplete(config: ModelConfig, spec: StubSpec): Promise<ModelConfig> {
  let answer: (frame: Record<string, unknown>) => void = () => {};
  const answered = new Promise<Record<string, unknown>>((resolve) => (answer = resolve));
  const stub = await StubProcess.start(spec, (frame) => frame.t === 'auto_completed' && answer(frame), (reason) => answer({ error: { message: reason } }));
  try {
    // As Triton hands it over: protobuf's JSON, every field present with its default.
    stub.send({ t: 'auto_complete', config: modelConfigToJson(config) });
    const frame = await answered;
    if (frame.error) throw fromFrameError(frame.error, `${spec.label}: auto_complete_config`);
    return frame.config as ModelConfig;
  } finally {
    await stub.stop(5_000);
  }
}

/** A model's file (model.py) or directory (model.savedmodel) must exist: checked without reading it. */
export async function requireModelFile(model: string, path: string): Promise<void> {
  if (!(await access(path).then(() => true, () => false))) throw new InferenceError('UNAVAILABLE', `model '${model}': unable to find '${path}'`);
}
