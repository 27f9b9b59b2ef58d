import { InferenceError } from '../errors.js';

/**
 * The failure of importing an object-storage SDK (an optional peer dependency of core):
 * when the package itself is absent, UNAVAILABLE saying what to install.
 */
export function sdkImportFailure(url: string, pkg: string, error: unknown): InferenceError {
  const missing = isModuleNotFound(error) && String((error as Error).message).includes(pkg);
  if (missing) return new InferenceError('UNAVAILABLE', `model repository '${url}' needs the ${pkg} package, which is not installed: npm install ${pkg}`);
  return InferenceError.from(error, 'UNAVAILABLE', `model repository '${url}': loading ${pkg} failed`);
}

/** An import failed for want of a package or file: ESM's or CommonJS's not-found (its message names what). */
export function isModuleNotFound(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
}
