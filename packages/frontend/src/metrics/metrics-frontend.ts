import { createServer, type IncomingMessage, type Server } from 'node:http';
import { InferenceError, type InferenceServer } from '@tritium/core';
import { listenSettings } from '../frontend-options.js';
import { listenHttp } from '../http-listener.js';
import type { ListenOptions, RunningFrontend } from '../listen.js';

/** Where Prometheus scrapes, as in Triton (which also takes a trailing slash). */
export const METRICS_PATH = '/metrics';
/** Triton's --metrics-port default. */
export const DEFAULT_METRICS_PORT = 8002;
/** Prometheus' text exposition format, version 0.0.4: what server.metrics() writes. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export interface MetricsFrontendOptions extends ListenOptions {
  /** How long close() lets scrapes under way finish before it cuts them off. Default 30 000 ms, as Triton's --exit-timeout-secs. */
  readonly closeTimeoutMs?: number;
}

const FRONTEND = 'metrics frontend';

/**
 * Triton's metrics service: `GET /metrics` answers the server's Prometheus text. Other
 * paths answer 404, other methods 405; metrics turned off (ServerOptions.metrics false)
 * answer 503 saying so. close() answers the scrapes under way, then closes their
 * connections; idle keep-alive connections close at once.
 */
export async function startMetricsFrontend(server: InferenceServer, options: MetricsFrontendOptions = {}): Promise<RunningFrontend> {
  const { host, port, closeTimeoutMs } = listenSettings(FRONTEND, options, DEFAULT_METRICS_PORT);
  const http: Server = createServer(async (request, response) => {
    const { status, headers, body } = await answer(server, request);
    // Once closing, each answer ends its connection, so close() waits on no keep-alive client.
    response.writeHead(status, http.listening ? headers : { ...headers, Connection: 'close' }).end(body);
  });
  // Node's own connection tracking serves: a scrape is one short answer.
  const connections = { beginClosing: () => http.closeIdleConnections(), destroyAll: () => http.closeAllConnections() };
  const listener = await listenHttp(http, connections, { frontend: FRONTEND, host, port, closeTimeoutMs });
  return { host, port: listener.port, close: listener.close };
}

interface Reply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

async function answer(server: InferenceServer, request: IncomingMessage): Promise<Reply> {
  const path = new URL(request.url ?? '/', 'http://metrics').pathname;
  if (path !== METRICS_PATH && path !== `${METRICS_PATH}/`) {
    return failure(404, `no such endpoint '${path}': metrics are at GET ${METRICS_PATH}`);
  }
  if (request.method !== 'GET') {
    return { ...failure(405, `${request.method} is not allowed on ${METRICS_PATH}: use GET`), headers: { ...TEXT, Allow: 'GET' } };
  }
  try {
    return { status: 200, headers: { 'Content-Type': METRICS_CONTENT_TYPE }, body: await server.metrics() };
  } catch (error) {
    const refusal = InferenceError.from(error);
    return failure(refusal.code === 'UNAVAILABLE' ? 503 : 500, refusal.message);
  }
}

const TEXT = { 'Content-Type': 'text/plain; charset=utf-8' };

function failure(status: number, message: string): Reply {
  return { status, headers: TEXT, body: `${message}\n` };
}
