import { InferenceError } from '../errors.js';
import type { OpenTelemetrySdk } from './open-telemetry-sdk.js';
import { openTelemetrySettings } from './open-telemetry-settings.js';
import { OpenTelemetryTracer } from './otel-tracer.js';
import { RequestTracer } from './request-tracer.js';
import { TraceSettingTable } from './trace-setting-table.js';
import { checkTraceSettingChanges, DEFAULT_TRACE_SETTINGS, type TraceMode, type TraceSettings } from './trace-settings.js';

const MODES: readonly TraceMode[] = ['triton', 'opentelemetry'];

/**
 * A server's trace extension: its setting table, and the tracer of its mode (Triton's trace
 * files, or OpenTelemetry spans), which observes requests while some setting traces.
 */
export class ServerTracing {
  private readonly table: TraceSettingTable;
  private readonly tracer: RequestTracer | OpenTelemetryTracer;
  private readonly mode: TraceMode;

  /**
   * `startup`: ServerOptions.trace, the global settings the server starts with (and that a
   * cleared global setting returns to), its mode and OpenTelemetry's settings. `sdk`: the
   * OpenTelemetry SDK, loaded beforehand for mode 'opentelemetry' (openTelemetrySdkFor).
   */
  constructor(server: object, startup: unknown, sdk: OpenTelemetrySdk | undefined) {
    if (startup !== undefined && (typeof startup !== 'object' || startup === null || Array.isArray(startup))) throw new InferenceError('INVALID_ARG', 'trace settings must be an object');
    const { opentelemetry, ...settings } = (startup ?? {}) as Record<string, unknown>;
    const mode = (settings.trace_mode ?? 'triton') as TraceMode;
    if (!MODES.includes(mode)) throw new InferenceError('INVALID_ARG', `trace setting 'trace_mode' must be 'triton' or 'opentelemetry', got ${JSON.stringify(mode)?.slice(0, 100)}`);
    if (opentelemetry !== undefined && mode !== 'opentelemetry') throw new InferenceError('INVALID_ARG', "trace setting 'opentelemetry' applies to trace_mode 'opentelemetry' only");
    this.mode = mode;
    const given = Object.entries(checkTraceSettingChanges(settings, mode)).filter(([, value]) => value !== null);
    const openTelemetry = mode === 'opentelemetry' ? openTelemetrySettings(opentelemetry) : undefined;
    this.table = new TraceSettingTable({ ...DEFAULT_TRACE_SETTINGS, ...Object.fromEntries(given), trace_mode: mode, ...(openTelemetry && { opentelemetry: openTelemetry }) });
    const samplerFor = (model: string) => this.table.samplerFor(model);
    if (openTelemetry) {
      if (!sdk) throw new InferenceError('INTERNAL', "trace mode 'opentelemetry' needs the OpenTelemetry SDK loaded first");
      this.tracer = new OpenTelemetryTracer(server, samplerFor, sdk, openTelemetry);
    } else {
      this.tracer = new RequestTracer(server, samplerFor);
    }
    this.tracer.setActive(this.table.tracing());
  }

  settings(model?: string): TraceSettings {
    return this.table.settings(model);
  }

  update(changes: unknown, model?: string): TraceSettings {
    const settings = this.table.update(checkTraceSettingChanges(changes, this.mode), model);
    this.tracer.setActive(this.table.tracing());
    return settings;
  }

  /** After the last request: writes what the settings hold and closes the files, or exports the spans still held. */
  async close(): Promise<void> {
    this.tracer.setActive(false);
    this.table.close();
    if (this.tracer instanceof OpenTelemetryTracer) await this.tracer.close();
  }
}
