import { InferenceError, type InferenceServer } from '@tritium/core';
import { traceSettingChanges, wireTraceSettings } from '../trace-setting-wire.js';

interface SettingValue {
  readonly value?: readonly string[];
}

export interface TraceSettingRequest {
  readonly settings: Readonly<Record<string, SettingValue>>;
  readonly model_name?: string;
}

/**
 * Triton's TraceSetting rpc: changes the settings the request names (a setting with no
 * value is cleared; none named: it only reads), for `model_name` or globally, and answers
 * the settings in force. A refusal (INVALID_ARGUMENT naming the setting, UNIMPLEMENTED for
 * `trace_file`, as Triton) changes nothing.
 */
export function traceSettingRpc(server: InferenceServer, request: TraceSettingRequest): { settings: Record<string, { value: string[] }> } {
  const model = request.model_name || undefined;
  const names = Object.keys(request.settings);
  const settings = names.length > 0 ? server.updateTraceSettings(traceSettingChanges(Object.fromEntries(names.map((name) => [name, given(name, request.settings[name]!)]))), model) : server.traceSettings(model);
  return { settings: Object.fromEntries(Object.entries(wireTraceSettings(settings)).map(([name, value]) => [name, { value: typeof value === 'string' ? [value] : value }])) };
}

/** A SettingValue as the HTTP body would give it: no value is null (clear), trace_level a list, any other one value. */
function given(name: string, setting: SettingValue): string | string[] | null {
  const values = setting.value ?? [];
  if (values.length === 0) return null;
  if (name === 'trace_level') return [...values];
  if (values.length > 1) throw new InferenceError('INVALID_ARG', `expect only 1 value for '${name}'`);
  return values[0]!;
}
