import type { Backend, Logger } from '@tritium/core';
import type { BackendSettings } from './backend-config.js';

export interface OptionalBackend {
  readonly specifier: string;
  readonly load: (settings: BackendSettings) => Promise<Backend>;
}

/** The official backends the frontend lists as optional peer dependencies. */
export const OPTIONAL_BACKENDS: readonly OptionalBackend[] = [
  { specifier: '@tritium/backend-onnx', load: async ({ onnxruntime }) => (await import('@tritium/backend-onnx')).onnxBackend(onnxruntime) },
  { specifier: '@tritium/backend-python', load: async ({ python }) => (await import('@tritium/backend-python')).pythonBackend(python) },
];

/**
 * The backends that are installed, each created once. A missing one is left out with a
 * warning (core then reports its models UNAVAILABLE, naming the backend); one that is
 * installed but fails to import is an error, not a missing package.
 */
export async function installedBackends(logger: Logger, settings: BackendSettings, candidates: readonly OptionalBackend[] = OPTIONAL_BACKENDS): Promise<Backend[]> {
  const installed: Backend[] = [];
  for (const { specifier, load } of candidates) {
    try {
      installed.push(await load(settings));
    } catch (error) {
      if (!isPackageMissing(error, specifier)) throw error;
      logger.warn(`${specifier} is not installed: models that need it will be UNAVAILABLE`);
    }
  }
  return installed;
}

/** Whether `error` says that `specifier` itself cannot be found (not a module it imports). */
export function isPackageMissing(error: unknown, specifier: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && typeof message === 'string' && message.includes(`'${specifier}'`);
}
