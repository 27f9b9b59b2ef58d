import { InferenceError, modelConfigFromJson, type LoadModelOptions } from '@tritium/core';
import { describe, invalid } from '../wire-values.js';
import type { Handler } from './http-context.js';
import { optionalJsonBody } from './request-body.js';
import { optionalBoolean, optionalObject, type JsonObject } from './request-json.js';
import { sendEmpty, sendJson } from './responses.js';
import type { Route } from './routes.js';

/** `POST /v2/repository/index`, optionally `{"ready": true}` for the ready models only. */
export const repositoryIndex: Handler<Extract<Route, { kind: 'repository-index' }>> = async ({ server, bodyLimitBytes }, _route, req, res) => {
  // Triton parses any depth here, so a 'ready' nested too deep to read is just not a boolean.
  const body = await optionalJsonBody(req, bodyLimitBytes, 'index request', { tooDeep: (key) => (key === 'ready' ? notBoolean() : undefined) });
  if (body?.ready !== undefined && typeof body.ready !== 'boolean') throw notBoolean();
  const ready = body?.ready === true;
  const entries = (await server.repositoryIndex())
    .filter((entry) => !ready || entry.state === 'READY')
    .map(({ name, version, state, reason }) => (version === undefined ? { name, state, reason } : { name, version: String(version), state, reason }));
  sendJson(res, 200, JSON.stringify(entries));
};

function notBoolean(): InferenceError {
  return invalid("Invalid value for 'ready': expected a boolean");
}

/** `POST /v2/repository/models/{m}/load` (a config override in `parameters.config`, model files in `parameters['file:<path>']`) and `.../unload`. */
export const repositoryControl: Handler<Extract<Route, { kind: 'repository-control' }>> = async ({ server, bodyLimitBytes }, route, req, res) => {
  if (route.repository !== undefined) throw new InferenceError('UNSUPPORTED', "'repository_name' specification is not supported");
  const body = await optionalJsonBody(req, bodyLimitBytes, `${route.action} request`);
  const parameters = optionalObject(body, 'parameters', `the ${route.action} request`);
  if (route.action === 'load') {
    await server.loadModel(route.model, loadOptions(parameters));
  } else {
    await server.unloadModel(route.model, { unloadDependents: optionalBoolean(parameters, 'unload_dependents', 'the unload request parameters') });
  }
  sendEmpty(res);
};

/**
 * Triton's load parameters: `config`, the model configuration as a JSON string (protobuf's
 * JSON form, as the model-config endpoint writes it), which replaces config.pbtxt for this
 * load; `file:<path>`, a model file's contents in base64, which with `config` make the
 * model directory the load reads (Triton's model file override).
 */
function loadOptions(parameters: JsonObject | undefined): LoadModelOptions {
  let config: LoadModelOptions['config'];
  // No prototype: a file named `__proto__` is one like any other.
  const files = Object.create(null) as Record<string, Uint8Array>;
  for (const [name, value] of Object.entries(parameters ?? {})) {
    if (typeof value !== 'string') throw invalid(`load parameter '${name}' must be a string, got ${describe(value)}`);
    if (name.startsWith('file:')) {
      // Node's decoder refuses nothing: check first, so that a corrupt file is refused rather than loaded.
      if (value.length % 4 !== 0 || !BASE64.test(value)) throw invalid(`load parameter '${name}' must be base64 text`);
      files[name.slice('file:'.length)] = Buffer.from(value, 'base64');
    } else if (name === 'config') {
      // Parsed by the load itself: a bad override fails it as Triton's does (Invalid config override).
      config = () => modelConfigFromJson(value);
    } else {
      throw invalid(`unknown load parameter '${name}': a load takes 'config' (the model configuration as JSON) and 'file:<path>' (a model file in base64)`);
    }
  }
  return { config, files };
}

/** Standard base64 with its padding, as Triton's clients send files. */
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
