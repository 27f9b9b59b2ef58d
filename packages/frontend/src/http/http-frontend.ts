import { Buffer } from 'node:buffer';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { InferenceError, type InferenceServer } from '@tritium/core';
import type { ListenOptions, RunningFrontend } from '../listen.js';
import { attachSharedMemory } from '../shared-memory/system-shared-memory.js';
import { generate } from './generate.js';
import type { HttpContext } from './http-context.js';
import { errorJson } from './http-errors.js';
import { infer } from './infer-handler.js';
import { allStatistics, health, modelInformation, serverMetadata } from './model-routes.js';
import { repositoryControl, repositoryIndex } from './repository-routes.js';
import { sendError } from './responses.js';
import { routeOf } from './routes.js';
import { serverMetadataJson } from './server-metadata.js';
import { sharedMemory } from './shared-memory-routes.js';

export interface HttpFrontendOptions extends ListenOptions {
  /** The largest request body accepted, after decompression (Triton's --http-max-input-size). Default 64 MiB. */
  readonly bodyLimitBytes?: number;
}

const DEFAULT_BODY_LIMIT = 64 * 1024 * 1024;

/**
 * Serves `server` over Triton's HTTP/REST protocol (KServe v2 with Triton's
 * extensions) on `options.host`:`options.port` (default 0.0.0.0:8000). close() stops
 * listening, lets requests in flight finish, closes idle keep-alive connections and
 * resolves once every connection is closed. While the server itself stops, the
 * frontend keeps answering, so health probes see it become not ready.
 */
export async function startHttpFrontend(server: InferenceServer, options: HttpFrontendOptions = {}): Promise<RunningFrontend> {
  const host = options.host ?? '0.0.0.0';
  const bodyLimitBytes = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT;
  if (!Number.isSafeInteger(bodyLimitBytes) || bodyLimitBytes < 1) {
    throw new InferenceError('INVALID_ARG', `\`bodyLimitBytes\` must be a positive integer, got ${String(options.bodyLimitBytes)}`);
  }
  const shared = attachSharedMemory(server);
  const context: HttpContext = { server, memory: shared.memory, bodyLimitBytes, serverMetadataJson: serverMetadataJson(server) };
  // Each open connection and how many of its requests are in flight, so close() can end the idle ones and wait for the rest.
  const connections = new Map<Socket, number>();
  let closing: Promise<void> | undefined;

  const http = createServer((req, res) => {
    const socket = req.socket;
    connections.set(socket, (connections.get(socket) ?? 0) + 1);
    res.once('close', () => {
      const active = connections.get(socket);
      if (active === undefined) return;
      connections.set(socket, active - 1);
      if (closing && active === 1) socket.destroySoon();
    });
    void respond(context, req, res);
  });
  http.on('connection', (socket: Socket) => {
    connections.set(socket, 0);
    socket.once('close', () => connections.delete(socket));
  });
  http.on('clientError', answerMalformed);

  const port = await listen(http, options.port ?? 8000, host);
  return {
    host,
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        http.close(() => {
          shared.release();
          resolve();
        });
        for (const [socket, active] of connections) if (active === 0) socket.destroy();
      });
      return closing;
    },
  };
}

async function respond(context: HttpContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const route = routeOf(req.method, req.url);
    switch (route.kind) {
      case 'server-metadata':
        return await serverMetadata(context, route, req, res);
      case 'health':
        return await health(context, route, req, res);
      case 'statistics':
        return await allStatistics(context, route, req, res);
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

function listen(http: ReturnType<typeof createServer>, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    http.once('error', (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'EADDRINUSE' ? 'already in use' : error.message;
      reject(new InferenceError('UNAVAILABLE', `HTTP frontend: socket '${host}:${port}' ${reason}`, { cause: error }));
    });
    http.listen(port, host, () => resolve((http.address() as { port: number }).port));
  });
}

/** Node's parser refused the request (a truncated body, bytes that start no request): say why, and close. */
function answerMalformed(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, reason, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'the request headers are too large']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'the request was not received in time']
        : error.code === 'HPE_INVALID_EOF_STATE'
          ? [400, 'Bad Request', 'the connection ended before the request did: its body is shorter than its Content-Length']
          : [400, 'Bad Request', `malformed HTTP request (${error.message}); after a request on this connection, its body may have been longer than its Content-Length`];
  const body = errorJson(new Error(message));
  socket.end(`HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}
