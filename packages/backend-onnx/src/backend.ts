import { constants } from 'node:os';
import type { ResourceLimits } from 'node:worker_threads';
import { choiceParameter } from '@tritium/core/backend';
import type { Backend, BackendModel, ModelConfig, ModelContext, ModelFiles } from '@tritium/core/backend';
import { DEFAULT_MAX_BATCH_SIZE, autoCompleteFromSignature, listsInputsAndOutputs } from './auto-complete.js';
import { ExecutionPool } from './execution-pool.js';
import { resolveModelFile } from './model-file.js';
import { OnnxModel } from './onnx-model.js';
import { RuntimeLoader } from './runtime.js';
import type { RuntimeKind, RuntimeLoaderOptions } from './runtime.js';
import { openSession } from './session.js';
import { signatureOf } from './signature.js';
import { ThreadChoice } from './thread-choice.js';

/** The model config parameter that picks the onnxruntime package for one model. */
export const RUNTIME_PARAMETER = 'runtime';

export interface OnnxBackendOptions extends RuntimeLoaderOptions {
  /**
   * The runtime for models whose config does not choose one (parameter `runtime`):
   * 'auto' (default) uses onnxruntime-node and falls back to onnxruntime-web when the
   * native binding cannot load; 'node' and 'web' use that package only.
   */
  readonly runtime?: RuntimeKind | 'auto';
  /** max_batch_size given by auto-complete to a model that can batch (Triton's default-max-batch-size, 4). */
  readonly defaultMaxBatchSize?: number;
  /**
   * Whether a model's instances share one session (per device) unless its config says
   * otherwise with `share_session_between_instances`. Default false, as in Triton: a
   * session per instance, each model's on different pool threads, so N instances run N
   * runs at once while N threads are free.
   */
  readonly shareSessionsBetweenInstances?: boolean;
  /**
   * How many worker threads host the sessions of all this backend's models (the
   * execution pool). Default: one per core (`os.availableParallelism()`). Each session's
   * default intra-op threads are the cores divided by this, at least one.
   */
  readonly executionThreads?: number;
  /**
   * Node's limits for each execution thread (its JavaScript heap, mostly the tensors
   * crossing to it). A thread that exceeds them dies: its requests fail with
   * UNAVAILABLE and the sessions it hosted are opened again on a new one. Default: Node's defaults.
   */
  readonly workerResourceLimits?: ResourceLimits;
  /**
   * The scheduling priority of the execution threads and of the intra-op threads their
   * sessions start, on Linux: a nice value from -20 (highest) to 19 (lowest). Default
   * `os.constants.priority.PRIORITY_BELOW_NORMAL` (10), so that on a machine with every
   * core busy the event loop's thread, whose delay every request and timer feels, runs
   * before them; they still have every core the loop and other processes leave idle.
   * Raising a priority above the process's own needs privileges; 0 gives them the process's.
   */
  readonly executionThreadPriority?: number;
}

/**
 * The ONNX Runtime backend: serves `backend: "onnxruntime"` / `platform:
 * "onnxruntime_onnx"` models from `model.onnx` (a file, or a directory holding
 * `model.onnx` and its external data), with onnxruntime-node, or onnxruntime-web
 * (WebAssembly) where the native binding cannot load or a model asks for it.
 */
export function onnxBackend(options: OnnxBackendOptions = {}): Backend {
  const loader = new RuntimeLoader(options);
  const defaultRuntime = options.runtime ?? 'auto';
  const defaultMaxBatchSize = options.defaultMaxBatchSize ?? DEFAULT_MAX_BATCH_SIZE;
  const shareSessions = options.shareSessionsBetweenInstances ?? false;
  if (options.executionThreads !== undefined && !(Number.isInteger(options.executionThreads) && options.executionThreads >= 1)) {
    throw new RangeError(`onnxBackend: executionThreads must be a whole number >= 1, not ${options.executionThreads}`);
  }
  const priority = options.executionThreadPriority ?? constants.priority.PRIORITY_BELOW_NORMAL;
  if (!(Number.isInteger(priority) && priority >= -20 && priority <= 19)) {
    throw new RangeError(`onnxBackend: executionThreadPriority must be a whole number from -20 to 19, not ${options.executionThreadPriority}`);
  }
  // Threads start with the first session that needs one.
  const pool = new ExecutionPool(options.executionThreads, options.workerResourceLimits, priority);

  const runtimeFor = (config: ModelConfig) => loader.select(requestedRuntime(config, defaultRuntime));

  return {
    name: 'onnxruntime',
    platforms: ['onnxruntime_onnx'],
    defaultModelFilename: 'model.onnx',

    async autoCompleteConfig(config: ModelConfig, files: ModelFiles): Promise<ModelConfig> {
      if (listsInputsAndOutputs(config)) return config;
      const name = config.name ?? files.modelDirectory;
      const { runtime } = await runtimeFor(config);
      const modelFile = await resolveModelFile(files.modelPath, name);
      // Only the signature is needed: skip graph optimizations to open it quickly,
      // off the event loop unless the model is set to run inline.
      const options = { graphOptimizationLevel: 'disabled', executionProviders: [runtime.cpuProvider], logSeverityLevel: 3 } as const;
      const session = await openSession({ runtime, modelFile, options, modelName: name, pool }, ThreadChoice.fromConfig(config).thread);
      let completed: ModelConfig;
      try {
        completed = autoCompleteFromSignature(config, signatureOf(session.metadata, name), defaultMaxBatchSize);
      } finally {
        await session.release();
      }
      if (!completed.platform && (!completed.backend || completed.backend === 'onnxruntime')) completed = { ...completed, platform: 'onnxruntime_onnx' };
      if (!completed.backend) completed = { ...completed, backend: 'onnxruntime' };
      return completed;
    },

    async createModel(context: ModelContext): Promise<BackendModel> {
      const selected = await runtimeFor(context.config);
      return OnnxModel.load(context, selected, { shareSessions, pool });
    },
  };
}

/**
 * What core's registry of official backends calls, `createBackend(name, settings)`, when a
 * model needs 'onnxruntime' and the application passed none: `settings` is the server's
 * `backendSettings.onnxruntime` (`{}` when none), options as onnxBackend() takes them.
 */
export const createBackend = (_name = 'onnxruntime', settings: OnnxBackendOptions = {}): Backend => onnxBackend(settings);

function requestedRuntime(config: ModelConfig, fallback: RuntimeKind | 'auto'): RuntimeKind | 'auto' {
  return choiceParameter(config, RUNTIME_PARAMETER, { node: 'onnxruntime-node', web: 'onnxruntime-web, WebAssembly', auto: '' }) ?? fallback;
}
