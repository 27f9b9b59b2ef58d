import { InferenceError } from '../errors.js';
import { isIntegerIn, UINT32_MAX } from './integer-range.js';

/**
 * Where and how OpenTelemetry mode exports its spans, by the names tritonserver's
 * `--trace-config opentelemetry,<setting>=<value>` gives them. Fixed when the server starts.
 */
export interface OpenTelemetrySettings {
  /** The OTLP/HTTP (protobuf) traces endpoint; `host:port/path` means http://. */
  readonly url: string;
  /** Resource attributes added to Triton's `service.name=triton-inference-server` (a key given here wins). */
  readonly resource: Readonly<Record<string, string>>;
  /** The batch span processor's queue: spans ended past it are dropped. */
  readonly bsp_max_queue_size: number;
  /** Milliseconds between two exports. */
  readonly bsp_schedule_delay: number;
  /** Spans in one export; at most bsp_max_queue_size. */
  readonly bsp_max_export_batch_size: number;
}

type BspSetting = 'bsp_max_queue_size' | 'bsp_schedule_delay' | 'bsp_max_export_batch_size';

/** Triton's defaults for the batch span processor, each overridden by its OTEL_BSP_* variable as Triton's are. */
const BSP_DEFAULTS: Readonly<Record<BspSetting, { readonly env: string; readonly value: number }>> = {
  bsp_max_queue_size: { env: 'OTEL_BSP_MAX_QUEUE_SIZE', value: 2048 },
  bsp_schedule_delay: { env: 'OTEL_BSP_SCHEDULE_DELAY', value: 5000 },
  bsp_max_export_batch_size: { env: 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', value: 512 },
};

/** The OTLP/HTTP exporter's default, from OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT as OpenTelemetry's SDKs read them. */
function defaultUrl(env: NodeJS.ProcessEnv): string {
  if (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
  if (env.OTEL_EXPORTER_OTLP_ENDPOINT) return env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/$/, '') + '/v1/traces';
  return 'http://localhost:4318/v1/traces';
}

const KNOWN = ['url', 'resource', ...Object.keys(BSP_DEFAULTS)];

/**
 * ServerOptions.trace.opentelemetry checked, with Triton's defaults for what it leaves out.
 * Throws INVALID_ARG naming the field at fault.
 */
export function openTelemetrySettings(given: unknown, env: NodeJS.ProcessEnv = process.env): OpenTelemetrySettings {
  const fields = (given ?? {}) as Record<string, unknown>;
  if (typeof fields !== 'object' || Array.isArray(fields)) throw new InferenceError('INVALID_ARG', 'trace setting `opentelemetry` must be an object');
  for (const name of Object.keys(fields)) {
    if (!KNOWN.includes(name)) throw new InferenceError('INVALID_ARG', `unknown OpenTelemetry trace setting '${name}' (known: ${KNOWN.join(', ')})`);
  }
  const bsp = {} as Record<BspSetting, number>;
  for (const [name, { env: variable, value }] of Object.entries(BSP_DEFAULTS) as [BspSetting, (typeof BSP_DEFAULTS)[BspSetting]][]) {
    const fromEnv = env[variable];
    bsp[name] = fields[name] !== undefined ? uint32(`OpenTelemetry trace setting '${name}'`, fields[name]) : fromEnv !== undefined ? uint32(variable, /^\d+$/.test(fromEnv) ? Number(fromEnv) : fromEnv) : value;
  }
  if (bsp.bsp_max_export_batch_size > bsp.bsp_max_queue_size) {
    throw new InferenceError('INVALID_ARG', `OpenTelemetry trace setting 'bsp_max_export_batch_size' (${bsp.bsp_max_export_batch_size}) must be at most 'bsp_max_queue_size' (${bsp.bsp_max_queue_size})`);
  }
  return { url: url(fields.url ?? defaultUrl(env)), resource: resource(fields.resource), ...bsp };
}

function uint32(name: string, value: unknown): number {
  if (isIntegerIn(value, 0, UINT32_MAX)) return value;
  throw new InferenceError('INVALID_ARG', `${name} must be an integer from 0 to 2^32-1, got ${JSON.stringify(value)?.slice(0, 100)}`);
}

/** As Triton's exporter takes it: `host:port/v1/traces` is http. */
function url(value: unknown): string {
  const text = typeof value === 'string' ? (/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`) : '';
  if (!URL.canParse(text) || !/^https?:$/.test(new URL(text).protocol)) {
    throw new InferenceError('INVALID_ARG', `OpenTelemetry trace setting 'url' must be an http(s) URL or host:port/path, got ${JSON.stringify(value)?.slice(0, 200)}`);
  }
  return text;
}

function resource(value: unknown): Readonly<Record<string, string>> {
  if (value === undefined) return {};
  const fit = typeof value === 'object' && value !== null && !Array.isArray(value) && Object.values(value).every((v) => typeof v === 'string');
  if (!fit) throw new InferenceError('INVALID_ARG', `OpenTelemetry trace setting 'resource' must be an object of string attributes, got ${JSON.stringify(value)?.slice(0, 200)}`);
  return { ...(value as Record<string, string>) };
}
