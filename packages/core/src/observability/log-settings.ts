import { InferenceError } from '../errors.js';
import { INT32_MAX, isIntegerIn } from './integer-range.js';

/** The server's log settings, by the names Triton's logging extension gives them (GET/POST /v2/logging). */
export interface LogSettings {
  /** The file lines are appended to; '' for standard error. Fixed once the logger is made. */
  readonly log_file: string;
  readonly log_info: boolean;
  readonly log_warning: boolean;
  readonly log_error: boolean;
  /** 0: no verbose messages; n: those of level n and below (1: model load steps, 2: each request too). */
  readonly log_verbose_level: number;
  /** The line prefix: `default` (`I0315 19:34:17.024361`) or `ISO8601` (`2024-03-15T19:34:17Z I`). */
  readonly log_format: LogFormat;
}

export type LogFormat = 'default' | 'ISO8601';

/** Triton's defaults: every level but verbose on, to standard error. */
export const DEFAULT_LOG_SETTINGS: LogSettings = Object.freeze({
  log_file: '',
  log_info: true,
  log_warning: true,
  log_error: true,
  log_verbose_level: 0,
  log_format: 'default',
});

type Check = (value: unknown) => string | undefined;

const isBoolean: Check = (value) => (typeof value === 'boolean' ? undefined : 'a boolean');

/** What each setting takes: undefined when `value` is fit, else what it should have been. */
const CHECKS: Readonly<Record<keyof LogSettings, Check>> = {
  log_file: (value) => (typeof value === 'string' ? undefined : 'a string'),
  log_info: isBoolean,
  log_warning: isBoolean,
  log_error: isBoolean,
  // Triton keeps the level in an int32.
  log_verbose_level: (value) => (isIntegerIn(value, 0, INT32_MAX) ? undefined : 'an integer from 0 to 2^31-1'),
  log_format: (value) => (value === 'default' || value === 'ISO8601' ? undefined : "'default' or 'ISO8601'"),
};

/**
 * `given` checked as settings to change: an object whose every field is a known setting
 * of the right type (an undefined field changes nothing). Throws INVALID_ARG naming the
 * first field at fault.
 */
export function checkLogSettings(given: unknown): Partial<LogSettings> {
  if (typeof given !== 'object' || given === null || Array.isArray(given)) throw new InferenceError('INVALID_ARG', 'log settings must be an object');
  const checked: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(given)) {
    if (!Object.hasOwn(CHECKS, name)) throw new InferenceError('INVALID_ARG', `unknown log setting '${name}' (known: ${Object.keys(CHECKS).join(', ')})`);
    if (value === undefined) continue;
    const expected = CHECKS[name as keyof LogSettings](value);
    if (expected) throw new InferenceError('INVALID_ARG', `log setting '${name}' must be ${expected}, got ${shown(value)}`);
    checked[name] = value;
  }
  return checked as Partial<LogSettings>;
}

function shown(value: unknown): string {
  return typeof value === 'string' ? `'${value.slice(0, 100)}'` : value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value === 'object' ? 'an object' : String(value);
}
