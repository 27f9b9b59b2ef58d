import { constants } from 'node:buffer';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { InferenceServer } from '@tritium/core';
import { integerOption, listenSettings } from '../frontend-options.js';
import { Connections } from '../http/connections.js';
import { listenHttp, type HttpListener } from '../http-listener.js';
import type { ListenOptions, RunningFrontend } from '../listen.js';
import { chatCompletions } from './chat-completions.js';
import { completions } from './completions.js';
import { embeddings } from './embeddings.js';
import { ModelCatalog } from './model-catalog.js';
import { ModelList } from './models.js';
import type { OpenAIContext, OpenAIHandler } from './openai-context.js';
import { OpenAIError } from './openai-error.js';
import { sendOpenAIError, sendOpenAIJson } from './openai-response.js';

export interface OpenAIFrontendOptions extends ListenOptions {
  /**
   * The model repository (one directory or several), where models' own files are read:
   * chat_template.jinja, tokenizer_config.json, tokenizer.json, GGUF files. Without it,
   * a model's chat template can come only from its `chat_template` config parameter.
   */
  readonly modelRepository?: string | readonly string[];
  /** One chat template (Jinja text) for every model, before any of their own (Triton's --chat-template). */
  readonly chatTemplate?: string;
  /** max_tokens when a request gives none. Default 16, as Triton's --default-max-tokens. */
  readonly defaultMaxTokens?: number;
  /** The largest request body accepted. Default 64 MiB, as Triton's --http-max-input-size. */
  readonly bodyLimitBytes?: number;
  /** How long close() lets requests in flight (streams among them) finish before it cuts their connections off. Default 30 000 ms. */
  readonly closeTimeoutMs?: number;
}

const FRONTEND = 'OpenAI frontend';
/** Triton's --openai-port default. */
export const DEFAULT_OPENAI_PORT = 9000;

/**
 * Serves `server` over OpenAI's API, as Triton's OpenAI-compatible frontend does
 * (docs/openai.md): /v1/models, /v1/completions, /v1/chat/completions, /v1/embeddings,
 * on `options.host`:`options.port` (default 0.0.0.0:9000). close() drains as the HTTP
 * frontend's does: requests in flight (streams too) finish, idle connections close,
 * and what is left after closeTimeoutMs is cut off.
 */
export async function startOpenAIFrontend(server: InferenceServer, options: OpenAIFrontendOptions = {}): Promise<RunningFrontend> {
  const { host, port: requestedPort, closeTimeoutMs } = listenSettings(FRONTEND, options, DEFAULT_OPENAI_PORT);
  const bodyLimitBytes = integerOption(FRONTEND, 'bodyLimitBytes', options.bodyLimitBytes ?? 64 * 1024 * 1024, 1, constants.MAX_LENGTH);
  const defaultMaxTokens = integerOption(FRONTEND, 'defaultMaxTokens', options.defaultMaxTokens ?? 16, 0, Number.MAX_SAFE_INTEGER);
  const roots = options.modelRepository === undefined ? [] : typeof options.modelRepository === 'string' ? [options.modelRepository] : [...options.modelRepository];
  const http = createServer((req, res) => {
    connections.accept(req, res);
    void respond(context, models, req, res);
  });
  const connections = new Connections(http);
  const context: OpenAIContext = { server, catalog: new ModelCatalog(server, roots, options.chatTemplate), connections, bodyLimitBytes, defaultMaxTokens };
  const models = new ModelList(server);
  let listener: HttpListener;
  try {
    listener = await listenHttp(http, connections, { frontend: FRONTEND, host, port: requestedPort, closeTimeoutMs });
  } catch (error) {
    models.close();
    throw error;
  }
  return { host, port: listener.port, close: () => listener.close().then(() => models.close()) };
}

const POST_ROUTES: Readonly<Record<string, OpenAIHandler>> = {
  '/v1/completions': completions,
  '/v1/chat/completions': chatCompletions,
  '/v1/embeddings': embeddings,
};

const MODELS_PATH = '/v1/models';

async function respond(context: OpenAIContext, models: ModelList, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const handler = POST_ROUTES[path];
    if (handler) {
      allow(req, 'POST');
      return await handler(context, req, res);
    }
    if (path === MODELS_PATH) {
      allow(req, 'GET');
      return sendOpenAIJson(res, 200, await models.list());
    }
    if (path.startsWith(`${MODELS_PATH}/`)) {
      allow(req, 'GET');
      return sendOpenAIJson(res, 200, await models.retrieve(modelId(path.slice(MODELS_PATH.length + 1))));
    }
    throw new OpenAIError(404, `no route ${req.method} ${path}: the OpenAI frontend serves ${MODELS_PATH}, ${Object.keys(POST_ROUTES).join(', ')}`, { code: 'unknown_url' });
  } catch (error) {
    sendOpenAIError(res, error);
  }
}

function allow(req: IncomingMessage, method: string): void {
  if (req.method !== method) throw new OpenAIError(405, `${req.method} is not allowed here: use ${method}`, { code: 'method_not_allowed' });
}

/** A model id from the path, percent-decoded (ids may hold any character). */
function modelId(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw new OpenAIError(400, `the model id in the path is not valid percent-encoding: '${encoded}'`, { param: 'model', code: 'invalid_value' });
  }
}
