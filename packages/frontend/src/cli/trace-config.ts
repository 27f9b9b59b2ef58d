import type { TraceLevel, TraceSettingChanges } from '@tritium/core';
import { UsageError } from './usage-error.js';

const FORM = "'<setting>=<value>' or 'triton,<setting>=<value>'";

/** Triton's --trace-config level words, in any case. */
const LEVELS: Readonly<Record<string, TraceLevel>> = { false: 'OFF', off: 'OFF', true: 'TIMESTAMPS', on: 'TIMESTAMPS', min: 'TIMESTAMPS', max: 'TIMESTAMPS', timestamps: 'TIMESTAMPS', tensors: 'TENSORS' };

/**
 * Every --trace-config as the server's startup trace settings, as tritonserver reads them:
 * `level=`, `rate=`, `count=` and `mode=` globally, `triton,file=` and
 * `triton,log-frequency=` for Triton's mode (here also without the `triton,`). Levels
 * given several times add up; OFF among them turns tracing off. OpenTelemetry mode is
 * refused: it is not built yet. Undefined when none is given.
 */
export function traceConfig(specs: readonly string[]): TraceSettingChanges | undefined {
  if (specs.length === 0) return undefined;
  const settings: { -readonly [K in keyof TraceSettingChanges]: TraceSettingChanges[K] } = {};
  const levels = new Set<TraceLevel>();
  for (const spec of specs) {
    const [mode, setting, value] = split(spec);
    if (mode === 'opentelemetry' || (setting === 'mode' && value.toLowerCase() === 'opentelemetry')) {
      throw new UsageError(`--trace-config ${spec}: OpenTelemetry mode is not built yet (only mode triton, trace files)`);
    }
    switch (setting) {
      case 'mode':
        if (value.toLowerCase() !== 'triton') throw new UsageError(`--trace-config ${spec}: invalid value for trace mode option: ${value}. Available options are "triton" and "opentelemetry"`);
        break;
      case 'level': {
        const level = LEVELS[value.toLowerCase()];
        if (!level) throw new UsageError(`--trace-config ${spec}: invalid value for trace level option: ${value}`);
        levels.add(level);
        break;
      }
      case 'rate':
        settings.trace_rate = integer(spec, value, 0, 2 ** 32 - 1);
        break;
      case 'count':
        settings.trace_count = integer(spec, value, -1, 2 ** 31 - 1);
        break;
      case 'file':
        settings.trace_file = value;
        break;
      case 'log-frequency':
        settings.log_frequency = integer(spec, value, 0, 2 ** 32 - 1);
        break;
      default:
        throw new UsageError(`--trace-config ${spec}: unknown trace setting '${setting}' (known: level, rate, count, mode, file, log-frequency)`);
    }
  }
  if (levels.size > 0) settings.trace_level = levels.has('OFF') ? ['OFF'] : (['TIMESTAMPS', 'TENSORS'] as const).filter((level) => levels.has(level));
  return settings;
}

/** `[mode,]setting=value` → [mode ('' when global), setting, value]. */
function split(spec: string): [string, string, string] {
  const comma = spec.indexOf(',');
  const equals = spec.indexOf('=');
  const hasMode = comma >= 0 && (equals < 0 || comma < equals);
  const mode = hasMode ? spec.slice(0, comma).toLowerCase() : '';
  if (hasMode && mode !== 'triton' && mode !== 'opentelemetry') {
    throw new UsageError(`--trace-config ${spec}: invalid value for trace mode option: ${spec.slice(0, comma)}. Available options are "triton" and "opentelemetry"`);
  }
  const rest = hasMode ? spec.slice(comma + 1) : spec;
  const at = rest.indexOf('=');
  if (at <= 0 || at === rest.length - 1) throw new UsageError(`--trace-config takes ${FORM}, got '${spec}'`);
  return [mode, rest.slice(0, at), rest.slice(at + 1)];
}

function integer(spec: string, value: string, min: number, max: number): number {
  const number = /^[+-]?\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isSafeInteger(number) || number < min || number > max) throw new UsageError(`--trace-config ${spec}: must be an integer from ${min} to ${max}`);
  return number;
}
