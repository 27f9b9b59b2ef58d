import { modelConfigToJson } from '@tritium/core';
import type { Handler } from './http-context.js';
import { invalid } from '../wire-values.js';
import { sendEmpty, sendJson } from './responses.js';
import type { Route } from './routes.js';

type RouteOf<K extends Route['kind']> = Extract<Route, { kind: K }>;

export const serverInformation: Handler<RouteOf<'server-metadata'>> = (context, _route, _req, res) => {
  sendJson(res, 200, context.serverMetadataJson);
};

/** 200 when live (ready), 400 otherwise, with no body either way, as Triton answers probes. */
export const health: Handler<RouteOf<'health'>> = ({ server }, route, _req, res) => {
  const up = route.probe === 'live' ? server.isLive() : server.isReady();
  sendEmpty(res, up ? 200 : 400);
};

/** `GET /v2/models/stats`: every served version's statistics. */
export const allStatistics: Handler<RouteOf<'statistics'>> = ({ server }, _route, _req, res) => {
  sendJson(res, 200, JSON.stringify(server.statistics()));
};

/** The model endpoints that only read: metadata, ready, config and stats. */
export const modelInformation: Handler<RouteOf<'model'>> = async ({ server }, { action, model, version }, _req, res) => {
  switch (action) {
    case 'ready':
      if (!(await server.isModelReady(model, version))) {
        // As Triton: the version that cannot be found gets its own error (404, or 503 when it is not loaded).
        await server.modelMetadata(model, version);
        throw invalid('Model version not ready');
      }
      return sendEmpty(res);
    case 'config':
      return sendJson(res, 200, JSON.stringify(modelConfigToJson(await server.modelConfig(model, version))));
    case 'stats':
      return sendJson(res, 200, JSON.stringify(server.statistics(model, version)));
    default:
      return sendJson(res, 200, JSON.stringify(await server.modelMetadata(model, version)));
  }
};
