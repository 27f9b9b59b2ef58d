import { realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BACKEND_MODEL_FILES } from '../config/platforms.js';
import { InferenceError } from '../errors.js';
import { emitTritiumWarning } from '../warnings.js';
import type { Backend } from '../contract/backend.js';

/**
 * The official backends, the one list: each name with the package that serves it, loaded
 * on first use when installed but not passed to the server. A package exports
 * `createBackend(name, settings)`, given the name asked for and that name's entry of
 * `ServerOptions.backendSettings` (`{}` when none).
 */
const OFFICIAL_PACKAGES: Readonly<Record<string, string>> = {
  onnxruntime: '@tritium/backend-onnx',
  python: '@tritium/backend-python',
  tensorflow: '@tritium/backend-python',
  fil: '@tritium/backend-fil',
  tensorrt: '@tritium/backend-tensorrt',
  pytorch: '@tritium/backend-pytorch',
  llamacpp: '@tritium/backend-llamacpp',
};

/** One official backend's settings (its entry of ServerOptions.backendSettings): the options its package's factory takes. */
type BackendSettings = Readonly<Record<string, unknown>>;

type BackendPackage = { createBackend?: (name: string, settings: BackendSettings) => Backend };

/** Holds the backends by name, initializes each once, and finalizes them at shutdown. */
export class BackendRegistry {
  private readonly backends = new Map<string, Promise<Backend>>();
  /** The backends whose initialize has finished, for metrics read without waiting. */
  private readonly ready = new Set<Backend>();

  /**
   * @param backends given by the application, each served instead of any official one of its name.
   * @param settings for the official backends loaded by name, keyed by backend name.
   */
  constructor(
    backends: readonly Backend[],
    private readonly settings: Readonly<Record<string, BackendSettings>> = {},
  ) {
    for (const backend of backends) {
      if (this.backends.has(backend.name)) {
        throw new InferenceError('ALREADY_EXISTS', `backend '${backend.name}' is given twice`);
      }
      this.backends.set(backend.name, this.initialized(backend));
      // A rejected initialize is reported when a model asks for the backend, not here.
      this.backends.get(backend.name)!.catch(() => {});
    }
  }

  /** Backend names with the model file each looks for, the given ones first. */
  async candidates(): Promise<Array<{ name: string; filename: string }>> {
    const result: Array<{ name: string; filename: string }> = [];
    for (const [name, backend] of this.backends) {
      const filename = await backend.then((b) => b.defaultModelFilename).catch(() => undefined);
      if (filename) result.push({ name, filename });
    }
    for (const { backend, filename } of BACKEND_MODEL_FILES) {
      if (!this.backends.has(backend)) result.push({ name: backend, filename });
    }
    return result;
  }

  async get(name: string): Promise<Backend> {
    let backend = this.backends.get(name);
    if (!backend) {
      const loading = loadOfficial(name, this.settings[name] ?? {}).then((loaded) => this.initialized(loaded));
      this.backends.set(name, loading);
      // A package that failed to import may be installed by the next load: only a success is kept.
      loading.catch(() => {
        if (this.backends.get(name) === loading) this.backends.delete(name);
      });
      backend = loading;
    }
    try {
      return await backend;
    } catch (error) {
      throw InferenceError.from(error, 'UNAVAILABLE', `backend '${name}'`);
    }
  }

  /** The backends ready now (initialized), given or loaded by name. */
  initializedBackends(): Backend[] {
    return [...this.ready];
  }

  private async initialized(backend: Backend): Promise<Backend> {
    await backend.initialize?.();
    this.ready.add(backend);
    return backend;
  }

  /** Finalizes every initialized backend; a failure is reported as a process warning and the others still finalize. */
  async finalize(): Promise<void> {
    const backends = await Promise.allSettled(this.backends.values());
    const finalized = await Promise.allSettled(
      backends.map(async (result) => (result.status === 'fulfilled' ? result.value.finalize?.() : undefined)),
    );
    for (const result of finalized) {
      if (result.status === 'rejected') emitTritiumWarning('TRITIUM_W007', `backend finalize failed: ${String(result.reason)}`);
    }
  }
}

async function loadOfficial(name: string, settings: BackendSettings): Promise<Backend> {
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
  const backend = module.createBackend(name, settings);
  if (backend.name !== name) {
    throw new InferenceError('UNAVAILABLE', `${specifier} created backend '${backend.name}', expected '${name}'`);
  }
  return backend;
}

/**
 * Imports an official backend package: first as core itself would resolve it, then
 * from the application's directory and from its main script's, since a strict
 * node_modules layout (pnpm) does not let core see packages that only the application
 * depends on (the `tritium` command's optional peers, say).
 */
async function importPackage(specifier: string): Promise<BackendPackage> {
  try {
    return (await import(specifier)) as BackendPackage;
  } catch (error) {
    for (const base of applicationBases()) {
      let resolved: string;
      try {
        resolved = createRequire(base).resolve(specifier);
      } catch {
        continue;
      }
      return (await import(pathToFileURL(resolved).href)) as BackendPackage;
    }
    throw error;
  }
}

/** Where the application's packages resolve from: its working directory, then its main script's (links followed). */
function applicationBases(): string[] {
  const bases = [join(process.cwd(), 'package.json')];
  const main = process.argv[1];
  if (main) {
    try {
      bases.push(join(dirname(realpathSync(main)), 'package.json'));
    } catch {
      // No main script on disk (node -e, a REPL): the working directory only.
    }
  }
  return bases;
}
