import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InferenceServer } from '@tritium/core';
import type { ClientSharedMemory } from '../shared-memory/client-shared-memory.js';
import type { Connections } from './connections.js';
import type { Route } from './routes.js';

/** What every handler of one frontend shares. */
export interface HttpContext {
  readonly server: InferenceServer;
  readonly memory: ClientSharedMemory;
  readonly bodyLimitBytes: number;
  /** The client connections, for cancelling what a request started when its client goes. */
  readonly connections: Connections;
  /** `GET /v2`, written once: it does not change while the server runs. */
  readonly serverMetadataJson: string;
}

/** Answers one request of a route's kind; what it throws is answered as Triton's error JSON. */
export type Handler<R extends Route = Route> = (context: HttpContext, route: R, req: IncomingMessage, res: ServerResponse) => Promise<void> | void;
