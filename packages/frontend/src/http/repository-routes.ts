import { InferenceError, type ModelConfig } from '@tritium/core';
import { modelConfigFromJson } from '../model-config-json.js';
import { describe, invalid } from '../wire-values.js';
import type { Handler } from './http-context.js';
import { optionalJsonBody } from './request-body.js';
import { optionalBoolean, optionalObject, type JsonObject } from './request-json.js';
import { sendEmpty, sendJson } from './responses.js';
import type { Route } from './routes.js';

/** `POST /v2/repository/index`, optionally `{"ready": true}` for the ready models only. */
export const repositoryIndex: Handler<Extract<Route, { kind: 'repository-index' }>> = async ({ server, bodyLimitBytes }, _route, req, res) => {
  const ready = optionalBoolean(await optionalJsonBody(req, bodyLimitBytes, 'index request'), 'ready', 'the index request');
  const entries = (await server.repositoryIndex())
    .filter((entry) => !ready || entry.state === 'READY')
    .map(({ name, version, state, reason }) => (version === undefined ? { name, state, reason } : { name, version: String(version), state, reason }));
  sendJson(res, 200, JSON.stringify(entries));
};

/** `POST /v2/repository/models/{m}/load` (a config override in `parameters.config`) and `.../unload`. */
export const repositoryControl: Handler<Extract<Route, { kind: 'repository-control' }>> = async ({ server, bodyLimitBytes }, route, req, res) => {
  if (route.repository !== undefined) throw new InferenceError('UNSUPPORTED', "'repository_name' specification is not supported");
  const body = await optionalJsonBody(req, bodyLimitBytes, `${route.action} request`);
  const parameters = optionalObject(body, 'parameters', `the ${route.action} request`);
  if (route.action === 'load') {
    await server.loadModel(route.model, { config: configOverride(parameters) });
  } else {
    if (optionalBoolean(parameters, 'unload_dependents', 'the unload request parameters')) {
      throw new InferenceError('UNSUPPORTED', "'unload_dependents' is not supported: unload each model by name");
    }
    await server.unloadModel(route.model);
  }
  sendEmpty(res);
};

/**
 * Triton's load parameters: `config`, the model configuration as a JSON string (protobuf's
 * JSON form, as the model-config endpoint writes it), which replaces config.pbtxt for this
 * load; `file:<path>` parameters (model files sent with the request) are not supported.
 */
function configOverride(parameters: JsonObject | undefined): ModelConfig | undefined {
  let config: ModelConfig | undefined;
  for (const [name, value] of Object.entries(parameters ?? {})) {
    if (typeof value !== 'string') throw invalid(`load parameter '${name}' must be a string, got ${describe(value)}`);
    if (name.startsWith('file:')) {
      throw new InferenceError('UNSUPPORTED', `load parameter '${name}': model files cannot be sent with a load request; put them in the model repository`);
    }
    if (name !== 'config') throw invalid(`unknown load parameter '${name}': a load takes 'config' (the model configuration as JSON)`);
    config = modelConfigFromJson(value);
  }
  return config;
}
