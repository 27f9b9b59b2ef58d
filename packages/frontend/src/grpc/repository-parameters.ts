import { InferenceError, type LoadModelOptions } from '@tritium/core';
import { modelConfigFromJson } from '../model-config-json.js';
import { invalid } from '../wire-values.js';
import { parameterValue, type WireParameter } from './wire-parameters.js';

type RepositoryParameters = Readonly<Record<string, WireParameter>>;

/**
 * RepositoryModelLoad's parameters, as Triton reads them: `config` (string_param) is a
 * ModelConfig in JSON that replaces the repository's; `file:<path>` (bytes_param) would
 * carry model files, which Tritium does not take over the network; any other name is refused.
 */
export function loadOptions(parameters: RepositoryParameters): LoadModelOptions {
  let options: LoadModelOptions = {};
  for (const name in parameters) {
    const parameter = parameters[name]!;
    if (name === 'config') {
      if (parameter.parameter_choice !== 'string_param') throw wrongType(name, 'string_param');
      options = { config: modelConfigFromJson(parameterValue(parameter, name, 'load') as string) };
    } else if (name.startsWith('file:')) {
      throw new InferenceError('UNSUPPORTED', `load parameter '${name}': model files sent with a load request are not supported; put them in the model repository`);
    } else {
      throw invalid(`unrecognized load parameter '${name}'`);
    }
  }
  return options;
}

/** RepositoryModelUnload's one parameter, `unload_dependents` (a bool_param); Tritium unloads only the model named. */
export function checkUnloadParameters(parameters: RepositoryParameters): void {
  const dependents = parameters.unload_dependents;
  if (dependents === undefined) return;
  if (dependents.parameter_choice !== 'bool_param') throw wrongType('unload_dependents', 'bool_param');
  if (dependents.bool_param === true) throw new InferenceError('UNSUPPORTED', "unload parameter 'unload_dependents' is not supported: unload each model by name");
}

function wrongType(name: string, expected: string): InferenceError {
  return invalid(`invalid value type for parameter '${name}', expected ${expected}`);
}
