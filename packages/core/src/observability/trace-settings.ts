import { InferenceError } from '../errors.js';
import { INT32_MAX, isIntegerIn, UINT32_MAX } from './integer-range.js';
import type { OpenTelemetrySettings } from './open-telemetry-settings.js';

/** Triton's trace levels: OFF, or TIMESTAMPS and TENSORS, either or both. */
export type TraceLevel = 'OFF' | 'TIMESTAMPS' | 'TENSORS';

/** Triton's trace modes: its JSON trace files, or spans exported to an OpenTelemetry collector. Chosen when the server starts. */
export type TraceMode = 'triton' | 'opentelemetry';

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
  /** The server's, for every model. `trace_file` and `log_frequency` apply to mode 'triton' only. */
  readonly trace_mode: TraceMode;
  /** Mode 'opentelemetry' only: where and how spans are exported. */
  readonly opentelemetry?: OpenTelemetrySettings;
}

/** The settings a change may name; null clears a model's own value (it falls back to the global one). */
export type TraceSettingChanges = {
  readonly [K in Exclude<keyof TraceSettings, 'trace_mode' | 'opentelemetry'>]?: TraceSettings[K] | null;
} & {
  /** Only the mode the server traces in (it is chosen at start). */
  readonly trace_mode?: TraceMode | null;
};

/** ServerOptions.trace: the global settings the server starts with, its mode, and OpenTelemetry's export settings. */
export type TraceStartupSettings = TraceSettingChanges & {
  readonly opentelemetry?: Partial<OpenTelemetrySettings>;
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

type Check = (value: unknown) => string | undefined;

const uint32: Check = (value) => (isIntegerIn(value, 0, UINT32_MAX) ? undefined : 'an integer from 0 to 2^32-1');

/** What each setting takes: undefined when `value` is fit, else what it should have been. */
const CHECKS: Readonly<Record<Exclude<keyof TraceSettingChanges, 'trace_mode'>, Check>> = {
  trace_level: checkLevels,
  trace_rate: uint32,
  trace_count: (value) => (isIntegerIn(value, -1, INT32_MAX) ? undefined : 'an integer from -1 to 2^31-1'),
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

/** Settings that only Triton's trace files use. */
const TRITON_MODE_ONLY: readonly string[] = ['trace_file', 'log_frequency'];

/**
 * `given` checked as settings to change for a server tracing in `mode`: an object whose
 * every field is a known setting with a fit value or null (an undefined field changes
 * nothing). `trace_mode` may only name `mode` (it changes nothing); in mode
 * 'opentelemetry', `trace_file` and `log_frequency` are refused, as they do nothing there.
 * Throws INVALID_ARG (UNSUPPORTED for another mode) naming the first field at fault.
 */
export function checkTraceSettingChanges(given: unknown, mode: TraceMode): TraceSettingChanges {
  if (typeof given !== 'object' || given === null || Array.isArray(given)) throw new InferenceError('INVALID_ARG', 'trace settings must be an object');
  const checked: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(given)) {
    if (name === 'trace_mode') {
      if (value !== undefined && value !== null && value !== mode) throw new InferenceError('UNSUPPORTED', `trace_mode is chosen when the server starts: it traces in mode '${mode}', got ${JSON.stringify(value)?.slice(0, 100)}`);
      continue;
    }
    if (!Object.hasOwn(CHECKS, name)) throw new InferenceError('INVALID_ARG', `unknown trace setting '${name}' (known: ${Object.keys(CHECKS).join(', ')}, trace_mode)`);
    if (value === undefined) continue;
    if (mode === 'opentelemetry' && TRITON_MODE_ONLY.includes(name)) throw new InferenceError('INVALID_ARG', `trace setting '${name}' applies to trace mode 'triton' only (the server traces in mode 'opentelemetry')`);
    if (value !== null) {
      const expected = CHECKS[name as keyof typeof CHECKS](value);
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

/**
 * Triton's check of a setting that traces: why it cannot, or undefined. At start, mode
 * 'opentelemetry' takes a rate of 0, as Triton's does: only requests that continue a
 * caller's trace (a W3C traceparent) are traced.
 */
export function invalidReason(settings: TraceSettings, atStartup = false): string | undefined {
  if (!isTracing(settings)) return undefined;
  const openTelemetry = settings.trace_mode === 'opentelemetry';
  if (settings.trace_rate === 0 && !(openTelemetry && atStartup)) return 'sample rate must be non-zero';
  if (openTelemetry && settings.trace_level.includes('TENSORS')) return "trace level TENSORS is not supported in trace mode 'opentelemetry'";
  if (!openTelemetry && settings.trace_file === '') return 'trace file name is not given';
  return undefined;
}
