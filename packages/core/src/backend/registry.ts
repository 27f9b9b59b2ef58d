import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ModelConfig } from '../config/schema.js';
import { InferenceError } from '../errors.js';
import type { Backend } from './backend.js';

/** Triton's legacy platform names and the backend that serves each. */
const PLATFORM_BACKENDS: Readonly<Record<string, string>> = {
  onnxruntime_onnx: 'onnxruntime',
  tensorrt_plan: 'tensorrt',
  pytorch_libtorch: 'pytorch',
  tensorflow_graphdef: 'tensorflow',
  tensorflow_savedmodel: 'tensorflow',
};

/** Official backends, loaded on first use when installed but not passed to the server. */
const OFFICIAL_PACKAGES: Readonly<Record<string, string>> = {
  onnxruntime: '@tritium/backend-onnx',
  python: '@tritium/backend-python',
  tensorrt: '@tritium/backend-tensorrt',
};

/** The default model file of each backend Triton knows, to guess a backend when a model has no config. */
const DEFAULT_MODEL_FILES: Readonly<Record<string, string>> = {
  onnxruntime: 'model.onnx',
  python: 'model.py',
  tensorrt: 'model.plan',
};

type BackendPackage = { createBackend?: () => Backend };

/** Holds the backends by name, initializes each once, and finalizes them at shutdown. */
export class BackendRegistry {
  private readonly backends = new Map<string, Promise<Backend>>();

  constructor(backends: readonly Backend[]) {
    for (const backend of backends) {
      if (this.backends.has(backend.name)) {
        throw new InferenceError('ALREADY_EXISTS', `backend '${backend.name}' is given twice`);
      }
      this.backends.set(backend.name, initialized(backend));
      // A rejected initialize is reported when a model asks for the backend, not here.
      this.backends.get(backend.name)!.catch(() => {});
    }
  }

  /** The backend a config names, by `backend` or else by `platform`. */
  static backendName(config: ModelConfig): string | undefined {
    if (config.backend) return config.backend;
    return config.platform ? PLATFORM_BACKENDS[config.platform] : undefined;
  }

  /** Backend names with the model file each looks for, the given ones first. */
  async candidates(): Promise<Array<{ name: string; filename: string }>> {
    const result: Array<{ name: string; filename: string }> = [];
    for (const [name, backend] of this.backends) {
      const filename = await backend.then((b) => b.defaultModelFilename).catch(() => undefined);
      if (filename) result.push({ name, filename });
    }
    for (const [name, filename] of Object.entries(DEFAULT_MODEL_FILES)) {
      if (!this.backends.has(name)) result.push({ name, filename });
    }
    return result;
  }

  async get(name: string): Promise<Backend> {
    let backend = this.backends.get(name);
    if (!backend) {
      backend = loadOfficial(name).then(initialized);
      this.backends.set(name, backend);
    }
    try {
      return await backend;
    } catch (error) {
      throw InferenceError.from(error, 'UNAVAILABLE', `backend '${name}'`);
    }
  }

  async finalize(): Promise<void> {
    const settled = await Promise.allSettled(this.backends.values());
    for (const result of settled) {
      if (result.status === 'fulfilled') await result.value.finalize?.();
    }
  }
}

async function initialized(backend: Backend): Promise<Backend> {
  await backend.initialize?.();
  return backend;
}

async function loadOfficial(name: string): Promise<Backend> {
  const specifier = OFFICIAL_PACKAGES[name];
  if (!specifier) {
    throw new InferenceError('UNAVAILABLE', `no backend '${name}' is registered; pass it in InferenceServer.start({ backends })`);
  }
  let module: BackendPackage;
  try {
    module = await importPackage(specifier);
  } catch (error) {
    throw new InferenceError(
      'UNAVAILABLE',
      `backend '${name}' is not registered and ${specifier} could not be loaded (${(error as Error).message}); install it or pass it in InferenceServer.start({ backends })`,
      { cause: error },
    );
  }
  if (typeof module.createBackend !== 'function') {
    throw new InferenceError('UNAVAILABLE', `${specifier} does not export createBackend()`);
  }
  const backend = module.createBackend();
  if (backend.name !== name) {
    throw new InferenceError('UNAVAILABLE', `${specifier} created backend '${backend.name}', expected '${name}'`);
  }
  return backend;
}

/**
 * Imports an official backend package: first as core itself would resolve it, then
 * from the application's directory, since a strict node_modules layout (pnpm) does
 * not let core see packages that only the application depends on.
 */
async function importPackage(specifier: string): Promise<BackendPackage> {
  try {
    return (await import(specifier)) as BackendPackage;
  } catch (error) {
    const fromApp = createRequire(join(process.cwd(), 'package.json'));
    let resolved: string;
    try {
      resolved = fromApp.resolve(specifier);
    } catch {
      throw error;
    }
    return (await import(pathToFileURL(resolved).href)) as BackendPackage;
  }
}
