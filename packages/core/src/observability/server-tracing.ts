import { RequestTracer } from './request-tracer.js';
import { TraceSettingTable } from './trace-setting-table.js';
import { checkTraceSettingChanges, DEFAULT_TRACE_SETTINGS, type TraceSettingChanges, type TraceSettings } from './trace-settings.js';

/** A server's trace extension: its setting table, and the tracer that subscribes while some setting traces. */
export class ServerTracing {
  private readonly table: TraceSettingTable;
  private readonly tracer: RequestTracer;

  /** `startup`: ServerOptions.trace, the global settings the server starts with (and that a cleared global setting returns to). */
  constructor(server: object, startup: unknown) {
    const given = Object.entries(checkTraceSettingChanges(startup ?? {})).filter(([, value]) => value !== null);
    this.table = new TraceSettingTable({ ...DEFAULT_TRACE_SETTINGS, ...Object.fromEntries(given) });
    this.tracer = new RequestTracer(server, (model) => this.table.samplerFor(model));
    this.tracer.setActive(this.table.tracing());
  }

  settings(model?: string): TraceSettings {
    return this.table.settings(model);
  }

  update(changes: unknown, model?: string): TraceSettings {
    const settings = this.table.update(checkTraceSettingChanges(changes), model);
    this.tracer.setActive(this.table.tracing());
    return settings;
  }

  /** After the last request: writes what the settings hold and closes the files. */
  close(): void {
    this.tracer.setActive(false);
    this.table.close();
  }
}
