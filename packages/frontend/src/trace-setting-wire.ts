import { InferenceError, type TraceLevel, type TraceSettingChanges, type TraceSettings } from '@tritium/core';

/** Trace settings as both protocols carry them: every value a string, trace_level a list of them. */
export type WireTraceSettings = Record<string, string | string[]>;

/** Triton's ranges for the numeric settings, and its refusal when a value falls outside. */
const NUMERIC: Readonly<Record<string, { readonly min: number; readonly max: number }>> = {
  trace_rate: { min: 0, max: 2 ** 32 - 1 },
  trace_count: { min: -1, max: 2 ** 31 - 1 },
  log_frequency: { min: 0, max: 2 ** 32 - 1 },
};

/** OpenTelemetry mode's export settings, which Triton reads at start only. */
const OPEN_TELEMETRY_SETTINGS: readonly string[] = ['url', 'resource', 'bsp_max_queue_size', 'bsp_schedule_delay', 'bsp_max_export_batch_size'];

/**
 * The settings in force as Triton's trace setting response writes them: in mode
 * 'opentelemetry' without `log_frequency` and `trace_file`, and with the export settings
 * (the resource attributes as `key=value` strings, a list as the gRPC answer has them).
 */
export function wireTraceSettings(settings: TraceSettings): WireTraceSettings {
  const common = { trace_level: [...settings.trace_level], trace_rate: String(settings.trace_rate), trace_count: String(settings.trace_count) };
  const openTelemetry = settings.opentelemetry;
  if (!openTelemetry) return { ...common, log_frequency: String(settings.log_frequency), trace_file: settings.trace_file, trace_mode: settings.trace_mode };
  const resource = Object.entries(openTelemetry.resource).map(([key, value]) => `${key}=${value}`);
  return {
    ...common,
    trace_mode: settings.trace_mode,
    url: openTelemetry.url,
    ...(resource.length > 0 && { resource }),
    bsp_max_queue_size: String(openTelemetry.bsp_max_queue_size),
    bsp_schedule_delay: String(openTelemetry.bsp_schedule_delay),
    bsp_max_export_batch_size: String(openTelemetry.bsp_max_export_batch_size),
  };
}

/**
 * A trace setting request's settings (null clears one) as the server takes them, with
 * Triton's refusals: `trace_file` cannot change over the network (UNSUPPORTED), a number
 * that does not parse or is out of range is INVALID_ARG naming the setting. Unlike
 * Triton, which skips them, an unknown setting or level is refused naming it, and so is
 * a `trace_mode` other than the server's (by the server, which knows its mode).
 */
export function traceSettingChanges(given: Readonly<Record<string, unknown>>): TraceSettingChanges {
  const changes: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(given)) {
    if (name === 'trace_file') throw new InferenceError('UNSUPPORTED', 'trace file location can not be updated through network protocol');
    if (OPEN_TELEMETRY_SETTINGS.includes(name)) throw new InferenceError('UNSUPPORTED', `OpenTelemetry trace setting '${name}' is set when the server starts (--trace-config opentelemetry,${name}=<value>)`);
    if (value === null || name === 'trace_mode') changes[name] = value;
    else if (name === 'trace_level') changes[name] = levels(value);
    else if (Object.hasOwn(NUMERIC, name)) changes[name] = integer(name, value);
    else throw new InferenceError('INVALID_ARG', `unknown trace setting '${name}' (known: trace_level, trace_rate, trace_count, log_frequency, trace_file, trace_mode)`);
  }
  return changes as TraceSettingChanges;
}

function levels(value: unknown): TraceLevel[] {
  if (!Array.isArray(value) || !value.every((level) => typeof level === 'string')) {
    throw new InferenceError('INVALID_ARG', "trace setting 'trace_level' must be an array of strings ('OFF', 'TIMESTAMPS', 'TENSORS')");
  }
  return value as TraceLevel[];
}

function integer(name: string, value: unknown): number {
  if (typeof value !== 'string') throw new InferenceError('INVALID_ARG', `trace setting '${name}' must be a string, got ${JSON.stringify(value)?.slice(0, 100)}`);
  const text = value.trim();
  if (!/^[-+]?\d+$/.test(text)) throw new InferenceError('INVALID_ARG', `Unable to parse '${name}', got: ${value}`);
  const number = Number(text);
  const { min, max } = NUMERIC[name]!;
  if (name === 'trace_count' && number < min) throw new InferenceError('INVALID_ARG', `Unable to parse 'trace_count'. Expecting value >= -1, got:${value}`);
  if (number < min || number > max) throw new InferenceError('INVALID_ARG', `Unable to parse '${name}', value is out of range [ ${min}, ${max} ], got: ${value}`);
  return number;
}
