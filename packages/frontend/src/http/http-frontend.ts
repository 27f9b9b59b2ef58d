import { constants } from 'node:buffer';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { InferenceServer } from '@tritium/core';
import { integerOption, listenSettings } from '../frontend-options.js';
import { listenHttp, type HttpListener } from '../http-listener.js';
import type { ListenOptions, RunningFrontend } from '../listen.js';
import { ApiRestrictions, type RestrictedApis } from '../restricted-api.js';
import { serverMetadata } from '../server-metadata.js';
import { attachSharedMemory, type SharedMemoryOptions } from '../shared-memory/client-shared-memory.js';
import { Connections } from './connections.js';
import { generate } from './generate.js';
import type { HttpContext } from './http-context.js';
import { HttpError } from './http-errors.js';
import { infer } from './infer-handler.js';
import { logging } from './logging-route.js';
import { traceSetting } from './trace-route.js';
import { allStatistics, health, modelInformation, serverInformation } from './model-routes.js';
import { repositoryControl, repositoryIndex } from './repository-routes.js';
import { sendError } from './responses.js';
import { categoryOf, checkMethod, routeOf, type Route } from './routes.js';
import { sharedMemory } from './shared-memory-routes.js';

export interface HttpFrontendOptions extends ListenOptions, SharedMemoryOptions {
  /** The largest request body accepted, after decompression (Triton's --http-max-input-size). Default 64 MiB. */
  readonly bodyLimitBytes?: number;
  /**
   * How long close() lets requests in flight (a stream among them) finish before it cuts
   * their connections off. Default 30 000 ms, as Triton's --exit-timeout-secs.
   */
  readonly closeTimeoutMs?: number;
  /**
   * API categories only clients sending a header may call (Triton's --http-restricted-api);
   * others get 403. Default: none restricted.
   */
  readonly restrictedApis?: RestrictedApis;
}

const FRONTEND = 'HTTP frontend';

/**
 * Serves `server` over Triton's HTTP/REST protocol (KServe v2 with Triton's
 * extensions) on `options.host`:`options.port` (default 0.0.0.0:8000). close() stops
 * listening, lets requests in flight finish (each connection closing after its last
 * answer), closes idle connections and those still uploading a request, cuts off what
 * is left after closeTimeoutMs, and resolves once every connection is closed. While the
 * server itself stops, the frontend keeps answering, so health probes see it become
 * not ready.
 */
export async function startHttpFrontend(server: InferenceServer, options: HttpFrontendOptions = {}): Promise<RunningFrontend> {
  const { host, port: requestedPort, closeTimeoutMs } = listenSettings(FRONTEND, options, 8000);
  const bodyLimitBytes = integerOption(FRONTEND, 'bodyLimitBytes', options.bodyLimitBytes ?? 64 * 1024 * 1024, 1, constants.MAX_LENGTH);
  const restrictions = new ApiRestrictions(FRONTEND, options.restrictedApis);
  const http = createServer((req, res) => {
    connections.accept(req, res);
    void respond(context, restrictions, req, res);
  });
  const connections = new Connections(http);
  const shared = attachSharedMemory(server, FRONTEND, options, bodyLimitBytes);
  const context: HttpContext = { server, memory: shared.memory, bodyLimitBytes, connections, serverMetadataJson: JSON.stringify(serverMetadata(server)) };
  let listener: HttpListener;
  try {
    listener = await listenHttp(http, connections, { frontend: FRONTEND, host, port: requestedPort, closeTimeoutMs });
  } catch (error) {
    shared.release();
    throw error;
  }
  return { host, port: listener.port, close: () => listener.close().then(() => shared.release()) };
}

async function respond(context: HttpContext, restrictions: ApiRestrictions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const route = routeOf(req.method, req.url);
    checkAccess(restrictions, route, req);
    checkMethod(route, req.method, req.url);
    switch (route.kind) {
      case 'server-metadata':
        return await serverInformation(context, route, req, res);
      case 'health':
        return await health(context, route, req, res);
      case 'statistics':
        return await allStatistics(context, route, req, res);
      case 'logging':
        return await logging(context, route, req, res);
      case 'trace':
        return await traceSetting(context, route, req, res);
      case 'repository-index':
        return await repositoryIndex(context, route, req, res);
      case 'repository-control':
        return await repositoryControl(context, route, req, res);
      case 'shared-memory':
        return await sharedMemory(context, route, req, res);
      case 'model':
        if (route.action === 'infer') return await infer(context, route, req, res);
        if (route.action === 'generate' || route.action === 'generate_stream') return await generate(context, route, req, res);
        return await modelInformation(context, route, req, res);
    }
  } catch (error) {
    sendError(res, error);
  }
}

/** Triton's answer to a restricted call without its header (or with another value): 403, before anything else is checked. */
function checkAccess(restrictions: ApiRestrictions, route: Route, req: IncomingMessage): void {
  const category = categoryOf(route);
  // An open category (every one, by default) costs the request no header reader.
  if (!restrictions.isRestricted(category)) return;
  const header = restrictions.missingHeader(category, (name) => {
    const value = req.headers[name];
    return Array.isArray(value) ? value[0] : value;
  });
  if (header !== undefined) throw new HttpError(403, `This API is restricted, expecting header '${header}'`);
}
