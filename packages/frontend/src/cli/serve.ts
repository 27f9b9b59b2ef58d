import { readFile } from 'node:fs/promises';
import { InferenceServer, type Logger, type ModelIndexEntry } from '@tritium/core';
import { startGrpcFrontend } from '../grpc/grpc-frontend.js';
import { startHttpFrontend } from '../http/http-frontend.js';
import type { RunningFrontend } from '../listen.js';
import { startMetricsFrontend } from '../metrics/metrics-frontend.js';
import { startOpenAIFrontend } from '../openai/openai-frontend.js';
import type { ServeOptions } from './arguments.js';
import { modelTable } from './model-table.js';
import { SERVICE_CLOSE_TIMEOUT_MS } from './shutdown.js';

export interface NamedFrontend {
  /** Triton's name for the service, as its log lines say it. */
  readonly name: string;
  readonly frontend: RunningFrontend;
}

/** A started server and the services in front of it. */
export interface RunningService {
  readonly server: InferenceServer;
  readonly frontends: readonly NamedFrontend[];
}

/**
 * Starts the server, which loads each official backend a model needs by name (core's one
 * list), with what --backend-config gives it; logs its models as Triton's
 * table, then starts each service allowed (Triton's order: gRPC, HTTP, metrics; then OpenAI's, with --openai-port), logging
 * `Started <service> at <host>:<port>`. If one fails to start, the others and the server
 * are stopped and the error says which. `logger` becomes the server's log: the command
 * passes its ServerLogger, so that /v2/logging changes the command's lines too.
 */
export async function serve(options: ServeOptions, logger: Logger): Promise<RunningService> {
  const server = await InferenceServer.start({ ...options.server, backendSettings: options.backends, logger });
  logger.info(`\n${modelTable(await server.repositoryIndex())}`);
  server.on('modelStateChanged', (entry) => logStateChange(entry, logger));
  const frontends: NamedFrontend[] = [];
  const start = async (name: string, starting: () => Promise<RunningFrontend>) => {
    try {
      const frontend = await starting();
      frontends.push({ name, frontend });
      logger.info(`Started ${name} at ${frontend.host}:${frontend.port}`);
    } catch (error) {
      throw new Error(`failed to start ${name}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  };
  try {
    if (options.grpc) await start('GRPCInferenceService', () => startGrpcFrontend(server, { ...options.grpc, closeTimeoutMs: SERVICE_CLOSE_TIMEOUT_MS, logger }));
    if (options.http) await start('HTTPService', () => startHttpFrontend(server, { ...options.http!, closeTimeoutMs: SERVICE_CLOSE_TIMEOUT_MS }));
    if (options.metrics) await start('Metrics Service', () => startMetricsFrontend(server, { ...options.metrics, closeTimeoutMs: SERVICE_CLOSE_TIMEOUT_MS }));
    if (options.openai) await start('OpenAI frontend', () => startOpenAI(server, options));
  } catch (error) {
    await Promise.allSettled(frontends.map(({ frontend }) => frontend.close()));
    await server.stop();
    throw error;
  }
  return { server, frontends };
}

/** The OpenAI frontend, reading models' own files (chat templates, tokenizers) from the server's repository. */
async function startOpenAI(server: InferenceServer, options: ServeOptions): Promise<RunningFrontend> {
  const { chatTemplateFile, defaultMaxTokens, ...listen } = options.openai!;
  const chatTemplate = chatTemplateFile === undefined ? undefined : await readFile(chatTemplateFile, 'utf8');
  return startOpenAIFrontend(server, { ...listen, modelRepository: options.server.modelRepository, chatTemplate, defaultMaxTokens, closeTimeoutMs: SERVICE_CLOSE_TIMEOUT_MS });
}

/** After startup (poll and explicit modes, and shutdown), each model change as Triton logs it. */
function logStateChange(entry: ModelIndexEntry, logger: Logger): void {
  const model = `'${entry.name}'${entry.version === undefined ? '' : ` version ${entry.version}`}`;
  // A reload that failed leaves the previous load READY, its reason saying so (core's model-manager.ts).
  if (entry.state === 'READY' && entry.reason.startsWith('reload failed')) logger.error(`failed to load ${model}: ${entry.reason}`);
  else if (entry.state === 'READY') logger.info(`successfully loaded ${model}`);
  else if (entry.state === 'UNAVAILABLE' && entry.reason === 'unloaded') logger.info(`successfully unloaded ${model}`);
  else if (entry.state === 'UNAVAILABLE') logger.error(`failed to load ${model}: ${entry.reason}`);
  else logger.verbose(`${entry.state.toLowerCase()} ${model}`);
}
