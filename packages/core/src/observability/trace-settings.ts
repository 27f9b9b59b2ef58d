import { InferenceError } from '../errors.js';

/** Triton's trace levels: OFF, or TIMESTAMPS and TENSORS, either or both. */
export type TraceLevel = 'OFF' | 'TIMESTAMPS' | 'TENSORS';

/** The trace settings of the server or of one model, by the names Triton's trace extension gives them. */
export interface TraceSettings {
  /** ['OFF'], or the levels traced, TIMESTAMPS before TENSORS as Triton answers them. */
  readonly trace_level: readonly TraceLevel[];
  /** One trace for every `trace_rate` requests. */
  readonly trace_rate: number;
  /** Traces still to take; -1 for no limit. */
  readonly trace_count: number;
  /** 0: traces go to `trace_file` when the setting ends; n: every n traces to `trace_file.<index>`. */
  readonly log_frequency: number;
  readonly trace_file: string;
  /** Only Triton's own mode is built: no OpenTelemetry export. */
  readonly trace_mode: 'triton';
}

/** The settings a change may name; null clears a model's own value (it falls back to the global one). */
export type TraceSettingChanges = {
  readonly [K in Exclude<keyof TraceSettings, 'trace_mode'>]?: TraceSettings[K] | null;
};

/** Triton's defaults: tracing off, one in 1000, no limit, written at the end, no file. */
export const DEFAULT_TRACE_SETTINGS: TraceSettings = Object.freeze({
  trace_level: Object.freeze(['OFF'] as TraceLevel[]),
  trace_rate: 1000,
  trace_count: -1,
  log_frequency: 0,
  trace_file: '',
  trace_mode: 'triton',
});

/** The order Triton answers levels in; duplicates fold. */
const LEVEL_ORDER: readonly TraceLevel[] = ['OFF', 'TIMESTAMPS', 'TENSORS'];
const UINT32_MAX = 2 ** 32 - 1;
const INT32_MAX = 2 ** 31 - 1;

type Check = (value: unknown) => string | undefined;

const uint32: Check = (value) => (Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= UINT32_MAX ? undefined : 'an integer from 0 to 2^32-1');

/** What each setting takes: undefined when `value` is fit, else what it should have been. */
const CHECKS: Readonly<Record<keyof TraceSettingChanges, Check>> = {
  trace_level: checkLevels,
  trace_rate: uint32,
  trace_count: (value) => (Number.isSafeInteger(value) && (value as number) >= -1 && (value as number) <= INT32_MAX ? undefined : 'an integer from -1 to 2^31-1'),
  log_frequency: uint32,
  trace_file: (value) => (typeof value === 'string' ? undefined : 'a string'),
};

function checkLevels(value: unknown): string | undefined {
  const expected = "a non-empty array of 'OFF', 'TIMESTAMPS', 'TENSORS'";
  if (!Array.isArray(value) || value.length === 0) return expected;
  if (value.some((level) => level !== 'OFF' && level !== 'TIMESTAMPS' && level !== 'TENSORS')) return expected;
  // As Triton: OFF says no level at all, so it comes alone.
  if (value.includes('OFF') && value.length > 1) return "'OFF' alone (Triton: \"Expect only one trace level 'OFF' is specified\")";
  return undefined;
}

/**
 * `given` checked as settings to change: an object whose every field is a known setting
 * with a fit value or null (an undefined field changes nothing). Throws INVALID_ARG naming
 * the first field at fault.
 */
export function checkTraceSettingChanges(given: unknown): TraceSettingChanges {
  if (typeof given !== 'object' || given === null || Array.isArray(given)) throw new InferenceError('INVALID_ARG', 'trace settings must be an object');
  const checked: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(given)) {
    if (!Object.hasOwn(CHECKS, name)) throw new InferenceError('INVALID_ARG', `unknown trace setting '${name}' (known: ${Object.keys(CHECKS).join(', ')})`);
    if (value === undefined) continue;
    if (value !== null) {
      const expected = CHECKS[name as keyof TraceSettingChanges](value);
      if (expected) throw new InferenceError('INVALID_ARG', `trace setting '${name}' must be ${expected}, got ${JSON.stringify(value)?.slice(0, 100)}`);
    }
    checked[name] = name === 'trace_level' && value !== null ? LEVEL_ORDER.filter((level) => (value as TraceLevel[]).includes(level)) : value;
  }
  return checked as TraceSettingChanges;
}

/** Whether `settings` trace anything. */
export function isTracing(settings: TraceSettings): boolean {
  return !settings.trace_level.includes('OFF');
}

/** Triton's check of a setting that traces: why it cannot, or undefined. */
export function invalidReason(settings: TraceSettings): string | undefined {
  if (!isTracing(settings)) return undefined;
  if (settings.trace_rate === 0) return 'sample rate must be non-zero';
  if (settings.trace_file === '') return 'trace file name is not given';
  return undefined;
}
