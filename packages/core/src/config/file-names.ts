import { isAbsolute, normalize, sep } from 'node:path';
import type { NormalizedModelConfig } from './schema.js';

/*
 * File names a model's configuration gives are read relative to one of the model's
 * directories (Triton's rules: the version directory for model files, the model's for
 * label files, `warmup/` and `initial_state/` for data). A config can come from a
 * client (a load with a config override), so a name must stay inside its directory.
 */

/** Why `name` would lead out of the directory it is relative to, or undefined when it stays inside. */
export function fileNameEscape(name: string): string | undefined {
  if (name.includes('\0')) return 'it contains a NUL character';
  if (isAbsolute(name)) return 'it is an absolute path';
  const normalized = normalize(name);
  if (normalized === '..' || normalized.startsWith(`..${sep}`)) return "its '..' leads out of the directory it is read from";
  return undefined;
}

/** Every file name the config gives, with the field that gives it (for messages). */
function fileNames(config: NormalizedModelConfig): Array<{ field: string; name: string }> {
  const names = [{ field: 'default_model_filename', name: config.default_model_filename }];
  for (const [capability, name] of Object.entries(config.cc_model_filenames)) names.push({ field: `cc_model_filenames['${capability}']`, name });
  for (const output of config.output) names.push({ field: `output '${output.name}' label_filename`, name: output.label_filename });
  for (const warmup of config.model_warmup) {
    for (const [input, data] of Object.entries(warmup.inputs)) {
      names.push({ field: `model_warmup '${warmup.name}' input '${input}' input_data_file`, name: data.input_data_file ?? '' });
    }
  }
  for (const state of config.sequence_batching?.state ?? []) {
    for (const initial of state.initial_state) names.push({ field: `state '${state.input_name}' initial_state '${initial.name}' data_file`, name: initial.data_file ?? '' });
  }
  return names.filter(({ name }) => name !== '');
}

/** Refuses a file name that leads out of the model's directories (an absolute path, a '..' too many). */
export function validateFileNames(config: NormalizedModelConfig, fail: (message: string) => never): void {
  for (const { field, name } of fileNames(config)) {
    const escape = fileNameEscape(name);
    if (escape) fail(`${field} '${name}' must name a file inside the model's directories, but ${escape}`);
  }
}
