import type { IncomingMessage, ServerResponse } from 'node:http';
import type { InferenceServer } from '@tritium/core';
import type { Connections } from '../http/connections.js';
import type { ModelCatalog } from './model-catalog.js';

/** What every OpenAI route is handed. */
export interface OpenAIContext {
  readonly server: InferenceServer;
  readonly catalog: ModelCatalog;
  readonly connections: Connections;
  readonly bodyLimitBytes: number;
  /** max_tokens when a request gives none (Triton's --default-max-tokens). */
  readonly defaultMaxTokens: number;
}

export type OpenAIHandler = (context: OpenAIContext, req: IncomingMessage, res: ServerResponse) => Promise<void>;
