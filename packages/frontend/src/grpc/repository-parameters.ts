import { InferenceError, modelConfigFromJson, type LoadModelOptions, type UnloadModelOptions } from '@tritium/core';
import { invalid } from '../wire-values.js';
import { parameterValue, type WireParameter } from './wire-parameters.js';

type RepositoryParameters = Readonly<Record<string, WireParameter>>;

/**
 * RepositoryModelLoad's parameters, as Triton reads them: `config` (string_param) is a
 * ModelConfig in JSON that replaces the repository's; `file:<path>` (bytes_param) is a
 * model file, which with `config` make the model directory the load reads (Triton's model
 * file override); any other name is refused.
 */
export function loadOptions(parameters: RepositoryParameters): LoadModelOptions {
  let config: LoadModelOptions['config'];
  // No prototype: a file named `__proto__` is one like any other.
  const files = Object.create(null) as Record<string, Uint8Array>;
  for (const [name, parameter] of Object.entries(parameters)) {
    if (name === 'config') {
      if (parameter.parameter_choice !== 'string_param') throw wrongType(name, 'string_param');
      const text = parameterValue(parameter, name, 'load') as string;
      // Parsed by the load itself: a bad override fails it as Triton's does (Invalid config override).
      config = () => modelConfigFromJson(text);
    } else if (name.startsWith('file:')) {
      if (parameter.parameter_choice !== 'bytes_param') throw wrongType(name, 'bytes_param');
      files[name.slice('file:'.length)] = parameterValue(parameter, name, 'load') as Uint8Array;
    } else {
      throw invalid(`unrecognized load parameter '${name}'`);
    }
  }
  return { config, files };
}

/** RepositoryModelUnload's one parameter, `unload_dependents` (a bool_param): an ensemble's models go with it. */
export function unloadOptions(parameters: RepositoryParameters): UnloadModelOptions {
  const dependents = parameters.unload_dependents;
  if (dependents === undefined) return {};
  if (dependents.parameter_choice !== 'bool_param') throw wrongType('unload_dependents', 'bool_param');
  return { unloadDependents: dependents.bool_param === true };
}

function wrongType(name: string, expected: string): InferenceError {
  return invalid(`invalid value type for parameter '${name}', expected ${expected}`);
}
