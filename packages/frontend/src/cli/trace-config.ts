import type { OpenTelemetrySettings, TraceLevel, TraceMode, TraceStartupSettings } from '@tritium/core';
import { UsageError } from './usage-error.js';

const FORM = "'<setting>=<value>' or '<mode>,<setting>=<value>'";
const UINT32_MAX = 2 ** 32 - 1;

/** Triton's --trace-config level words, in any case. */
const LEVELS: Readonly<Record<string, TraceLevel>> = { false: 'OFF', off: 'OFF', true: 'TIMESTAMPS', on: 'TIMESTAMPS', min: 'TIMESTAMPS', max: 'TIMESTAMPS', timestamps: 'TIMESTAMPS', tensors: 'TENSORS' };

/** The settings of each mode, by the mode they belong to ('' for the global ones). */
const MODE_SETTINGS: Readonly<Record<string, readonly string[]>> = {
  '': ['level', 'rate', 'count', 'mode'],
  triton: ['file', 'log-frequency'],
  opentelemetry: ['url', 'resource', 'bsp_max_queue_size', 'bsp_schedule_delay', 'bsp_max_export_batch_size'],
};

type Spec = { readonly spec: string; readonly mode: string; readonly setting: string; readonly value: string };
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * Every --trace-config as the server's startup trace settings, as tritonserver reads them:
 * `level=`, `rate=`, `count=` and `mode=` globally; `triton,file=` and
 * `triton,log-frequency=` for Triton's mode (here also without the `triton,`);
 * `opentelemetry,url=`, `opentelemetry,resource=<key>=<value>` (repeatable) and the batch
 * span processor's `opentelemetry,bsp_*=` for OpenTelemetry mode. Levels given several
 * times add up; OFF among them turns tracing off. Where tritonserver ignores the other
 * mode's settings, they are refused here. Undefined when none is given.
 */
export function traceConfig(specs: readonly string[]): TraceStartupSettings | undefined {
  if (specs.length === 0) return undefined;
  const parsed = specs.map(split);
  const modes = parsed.filter(({ setting }) => setting === 'mode').map(({ spec, value }) => traceMode(spec, value));
  const mode: TraceMode = modes.at(-1) ?? 'triton';
  const settings: Mutable<TraceStartupSettings> = modes.length > 0 ? { trace_mode: mode } : {};
  const openTelemetry: Mutable<Partial<OpenTelemetrySettings>> = {};
  const resource: Record<string, string> = {};
  const levels = new Set<TraceLevel>();
  for (const { spec, mode: given, setting, value } of parsed) {
    const owner = Object.keys(MODE_SETTINGS).find((key) => MODE_SETTINGS[key]!.includes(setting));
    if (owner === undefined || (given !== '' && owner !== given)) {
      const known = given === '' ? [...MODE_SETTINGS['']!, ...MODE_SETTINGS.triton!] : MODE_SETTINGS[given]!;
      throw new UsageError(`--trace-config ${spec}: unknown trace setting '${setting}' (known: ${known.join(', ')})`);
    }
    if (owner !== '' && owner !== mode) throw new UsageError(`--trace-config ${spec}: applies to trace mode ${owner}, and the mode is ${mode} (--trace-config mode=${owner})`);
    switch (setting) {
      case 'level': {
        const level = LEVELS[value.toLowerCase()];
        if (!level) throw new UsageError(`--trace-config ${spec}: invalid value for trace level option: ${value}`);
        levels.add(level);
        break;
      }
      case 'rate':
        settings.trace_rate = integer(spec, value, 0, UINT32_MAX);
        break;
      case 'count':
        settings.trace_count = integer(spec, value, -1, 2 ** 31 - 1);
        break;
      case 'file':
        settings.trace_file = value;
        break;
      case 'log-frequency':
        settings.log_frequency = integer(spec, value, 0, UINT32_MAX);
        break;
      case 'url':
        openTelemetry.url = value;
        break;
      case 'resource': {
        const at = value.indexOf('=');
        if (at <= 0) throw new UsageError(`--trace-config ${spec}: a resource is <key>=<value>`);
        resource[value.slice(0, at)] = value.slice(at + 1);
        break;
      }
      case 'bsp_max_queue_size':
      case 'bsp_schedule_delay':
      case 'bsp_max_export_batch_size':
        openTelemetry[setting] = integer(spec, value, 0, UINT32_MAX);
        break;
    }
  }
  if (levels.size > 0) settings.trace_level = levels.has('OFF') ? ['OFF'] : (['TIMESTAMPS', 'TENSORS'] as const).filter((level) => levels.has(level));
  if (Object.keys(resource).length > 0) openTelemetry.resource = resource;
  if (mode === 'opentelemetry') settings.opentelemetry = openTelemetry;
  return settings;
}

function traceMode(spec: string, value: string): TraceMode {
  const mode = value.toLowerCase();
  if (mode !== 'triton' && mode !== 'opentelemetry') throw new UsageError(`--trace-config ${spec}: invalid value for trace mode option: ${value}. Available options are "triton" and "opentelemetry"`);
  return mode;
}

/** `[mode,]setting=value` → its mode ('' when global), setting and value. */
function split(spec: string): Spec {
  const comma = spec.indexOf(',');
  const equals = spec.indexOf('=');
  const hasMode = comma >= 0 && (equals < 0 || comma < equals);
  const mode = hasMode ? traceMode(spec, spec.slice(0, comma)) : '';
  const rest = hasMode ? spec.slice(comma + 1) : spec;
  const at = rest.indexOf('=');
  if (at <= 0 || at === rest.length - 1) throw new UsageError(`--trace-config takes ${FORM}, got '${spec}'`);
  return { spec, mode, setting: rest.slice(0, at), value: rest.slice(at + 1) };
}

function integer(spec: string, value: string, min: number, max: number): number {
  const number = /^[+-]?\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isSafeInteger(number) || number < min || number > max) throw new UsageError(`--trace-config ${spec}: must be an integer from ${min} to ${max}`);
  return number;
}
