import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InferenceError, type InferenceServer } from '@tritium/core';
import type { ListenOptions, RunningFrontend } from '../listen.js';

/** Where Prometheus scrapes, as in Triton (which also takes a trailing slash). */
export const METRICS_PATH = '/metrics';
/** Triton's --metrics-port default. */
export const DEFAULT_METRICS_PORT = 8002;
/** Prometheus' text exposition format, version 0.0.4: what server.metrics() writes. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/**
 * Triton's metrics service: `GET /metrics` answers the server's Prometheus text. Other
 * paths answer 404, other methods 405; metrics turned off (ServerOptions.metrics false)
 * answer 503 saying so.
 */
export async function startMetricsFrontend(server: InferenceServer, options: ListenOptions = {}): Promise<RunningFrontend> {
  const host = options.host ?? '0.0.0.0';
  const http: Server = createServer(async (request, response) => {
    const { status, headers, body } = await answer(server, request);
    // Once closing, each answer ends its connection, so close() waits on no keep-alive client.
    response.writeHead(status, http.listening ? headers : { ...headers, Connection: 'close' }).end(body);
  });
  http.listen(options.port ?? DEFAULT_METRICS_PORT, host);
  // once() rejects on 'error' (a port in use, an address not on this host).
  await once(http, 'listening');
  const { port } = http.address() as AddressInfo;
  return { host, port, close: () => close(http) };
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

/** Stops listening; a scrape under way is answered, then its connection closes, and idle keep-alive connections close at once. */
function close(http: Server): Promise<void> {
  const closed = new Promise<void>((resolve, reject) => http.close((error) => (error ? reject(error) : resolve())));
  http.closeIdleConnections();
  return closed;
}
