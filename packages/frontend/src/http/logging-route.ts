import type { LogSettings } from '@tritium/core';
import type { Handler } from './http-context.js';
import { optionalJsonBody } from './request-body.js';
import { sendJson } from './responses.js';
import type { Route } from './routes.js';

/**
 * Triton's logging extension: `GET /v2/logging` answers the log settings; `POST` with some
 * of them (an empty body changes nothing) changes those and answers them all. A refusal
 * (400 naming the field, 501 for `log_file`) changes nothing.
 */
export const logging: Handler<Extract<Route, { kind: 'logging' }>> = async ({ server, bodyLimitBytes }, _route, req, res) => {
  if (req.method === 'POST') {
    const body = await optionalJsonBody(req, bodyLimitBytes, 'log settings');
    // As Triton's handler: a setting given as null is left as it is. The server checks the rest.
    const changes = Object.fromEntries(Object.entries(body ?? {}).filter(([, value]) => value !== null));
    server.updateLogSettings(changes as Partial<LogSettings>);
  }
  sendJson(res, 200, JSON.stringify(server.logSettings()));
};
