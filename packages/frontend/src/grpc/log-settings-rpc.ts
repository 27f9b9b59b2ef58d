import type { InferenceServer, LogSettings } from '@tritium/core';
import { parameterValue, type WireParameter } from './wire-parameters.js';

/** A LogSettings SettingValue as the loader decodes one (`parameter_choice` names the member set) and as a response carries it. */
type SettingValue = WireParameter;
type SettingValues = Readonly<Record<string, SettingValue>>;

/**
 * Triton's LogSettings rpc: changes the settings the request names (none: it only reads)
 * and answers them all. A refusal (INVALID_ARGUMENT naming the setting, UNIMPLEMENTED for
 * `log_file`, as Triton) changes nothing.
 */
export function logSettingsRpc(server: InferenceServer, request: { readonly settings: SettingValues }): { settings: Record<string, SettingValue> } {
  const changes = Object.fromEntries(Object.entries(request.settings).map(([name, value]) => [name, parameterValue(value, name, 'LogSettings')]));
  const settings = Object.keys(changes).length > 0 ? server.updateLogSettings(changes as Partial<LogSettings>) : server.logSettings();
  return { settings: Object.fromEntries(Object.entries(settings).map(([name, value]) => [name, settingValue(value)])) };
}

/** Booleans as bool_param, the verbose level as uint32_param, the file and format as string_param. */
function settingValue(value: LogSettings[keyof LogSettings]): SettingValue {
  if (typeof value === 'boolean') return { bool_param: value };
  return typeof value === 'number' ? { uint32_param: value } : { string_param: value };
}
