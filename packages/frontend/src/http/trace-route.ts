import { traceSettingChanges, wireTraceSettings } from '../trace-setting-wire.js';
import type { Handler } from './http-context.js';
import { optionalJsonBody } from './request-body.js';
import { sendJson } from './responses.js';
import type { Route } from './routes.js';

/**
 * Triton's trace extension: `GET v2[/models/<name>]/trace/setting` answers the settings in
 * force (a model's own, falling back to the global ones); `POST` changes those it names
 * (null clears a model's own) and answers them all. A refusal changes nothing.
 */
export const traceSetting: Handler<Extract<Route, { kind: 'trace' }>> = async ({ server, bodyLimitBytes }, route, req, res) => {
  const settings =
    req.method === 'POST'
      ? server.updateTraceSettings(traceSettingChanges((await optionalJsonBody(req, bodyLimitBytes, 'trace settings')) ?? {}), route.model)
      : server.traceSettings(route.model);
  sendJson(res, 200, JSON.stringify(wireTraceSettings(settings)));
};
