import type { ListenOptions } from './listen.js';
import { invalid } from './wire-values.js';

/** A frontend's integer option (`frontend` names it in the message, e.g. "HTTP frontend"), from `min` to `max`. */
export function integerOption(frontend: string, option: string, value: number, min: number, max: number): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw invalid(`${frontend} option \`${option}\` must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

/**
 * A frontend's host, port and close timeout, checked, with Triton's defaults: every
 * interface ('0.0.0.0'), the frontend's `defaultPort`, and 30 000 ms (--exit-timeout-secs).
 */
export function listenSettings(frontend: string, options: ListenOptions & { readonly closeTimeoutMs?: number }, defaultPort: number): { host: string; port: number; closeTimeoutMs: number } {
  return {
    host: options.host ?? '0.0.0.0',
    port: integerOption(frontend, 'port', options.port ?? defaultPort, 0, 65_535),
    closeTimeoutMs: integerOption(frontend, 'closeTimeoutMs', options.closeTimeoutMs ?? 30_000, 0, 2 ** 31 - 1),
  };
}
