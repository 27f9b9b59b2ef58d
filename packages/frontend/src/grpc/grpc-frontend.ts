import { Server, ServerCredentials } from '@grpc/grpc-js';
import { InferenceError, type InferenceServer, type Logger } from '@tritium/core';
import { integerOption, listenSettings } from '../frontend-options.js';
import type { ListenOptions, RunningFrontend } from '../listen.js';
import { invalid } from '../wire-values.js';
import { ApiRestrictions, type RestrictedApis } from '../restricted-api.js';
import { attachSharedMemory, type SharedMemoryOptions } from '../shared-memory/client-shared-memory.js';
import { routeGrpcLogging } from './grpc-logging.js';
import { HealthService } from './health-service.js';
import { inferenceService } from './inference-service.js';
import { loadServiceDefinitions } from './proto-definitions.js';
import { RESTRICTED_PROTOCOL_HEADER_PREFIX, restrictService } from './restricted-rpcs.js';
import type { ServingContext } from './serving-context.js';

export interface GrpcFrontendOptions extends ListenOptions, SharedMemoryOptions {
  /**
   * The largest message received (a request, or one message of a stream), in bytes; a
   * larger one ends its call with RESOURCE_EXHAUSTED before it is read. Default 64 MiB,
   * as the HTTP frontend's bodyLimitBytes (Triton takes up to 2^31-1).
   */
  readonly maxReceiveMessageBytes?: number;
  /** The largest message sent, in bytes. Default 2^31-1, Triton's (INT32_MAX). */
  readonly maxSendMessageBytes?: number;
  /**
   * How long close() waits for calls in flight (an open ModelStreamInfer stream among
   * them) before cutting them off. Default 30 000 ms, as Triton's --exit-timeout-secs.
   */
  readonly closeTimeoutMs?: number;
  /**
   * Categories of rpcs only clients sending `triton-grpc-protocol-<key>` metadata may call
   * (Triton's --grpc-restricted-protocol); others get UNAVAILABLE. Default: none restricted.
   */
  readonly restrictedApis?: RestrictedApis;
  /**
   * Where @grpc/grpc-js's own log lines go (a port it cannot bind, say), from the start
   * until close() resolves, as errors, info and verbose lines prefixed `@grpc/grpc-js: `.
   * grpc-js has one logger per process, which its clients use too: while several
   * frontends with a logger run, the most recently started gets every line, and when the
   * last closes grpc-js gets its previous logger back. Default: grpc-js's own, which
   * writes to stderr (`E No address added out of total 1 resolved`).
   */
  readonly logger?: Logger;
}

/** gRPC's own bound on a message: its length prefix is 32 bits, read as signed. */
const MAX_MESSAGE_BYTES = 2 ** 31 - 1;
const DEFAULT_MAX_RECEIVE_MESSAGE_BYTES = 64 * 1024 * 1024;
const FRONTEND = 'gRPC frontend';

/**
 * Serves `server` over Triton's gRPC protocol (inference.GRPCInferenceService and
 * grpc.health.v1.Health), by default on 0.0.0.0:8001.
 */
export async function startGrpcFrontend(server: InferenceServer, options: GrpcFrontendOptions = {}): Promise<RunningFrontend> {
  const { host, port: requestedPort, closeTimeoutMs } = listenSettings(FRONTEND, options, 8001);
  const maxReceive = integerOption(FRONTEND, 'maxReceiveMessageBytes', options.maxReceiveMessageBytes ?? DEFAULT_MAX_RECEIVE_MESSAGE_BYTES, 1, MAX_MESSAGE_BYTES);
  const maxSend = integerOption(FRONTEND, 'maxSendMessageBytes', options.maxSendMessageBytes ?? MAX_MESSAGE_BYTES, 1, MAX_MESSAGE_BYTES);
  const logger = loggerOption(options.logger);

  const definitions = loadServiceDefinitions();
  // Channelz stays on though nothing serves it: without it @grpc/grpc-js (1.14) does not
  // track its sessions, and forceShutdown() then cannot cut off the calls left at close.
  const grpcServer = new Server({ 'grpc.max_receive_message_length': maxReceive, 'grpc.max_send_message_length': maxSend });
  const shared = attachSharedMemory(server, FRONTEND, options, maxReceive);
  const release = () => shared.release();
  const context: ServingContext = { server, memory: shared.memory, closing: false };
  const restrictions = new ApiRestrictions(FRONTEND, options.restrictedApis, RESTRICTED_PROTOCOL_HEADER_PREFIX);
  grpcServer.addService(definitions.inference, restrictService(inferenceService(context), restrictions));
  const health = new HealthService(server);
  grpcServer.addService(definitions.health, restrictService(health.implementation(), restrictions));

  // From here until close() resolves, grpc-js's log lines go to the logger given.
  const unrouteLogging = logger ? routeGrpcLogging(logger) : () => {};
  let port: number;
  try {
    port = await bind(grpcServer, host, requestedPort);
  } catch (error) {
    unrouteLogging();
    release();
    throw new InferenceError('UNAVAILABLE', `the gRPC frontend cannot listen on ${host}:${requestedPort}: ${(error as Error).message}`);
  }
  let stopped: Promise<void> | undefined;
  return {
    host,
    port,
    close: () => {
      context.closing = true;
      health.close();
      return (stopped ??= shutdown(grpcServer, closeTimeoutMs).finally(() => {
        release();
        unrouteLogging();
      }));
    },
  };
}

/** The `logger` option, checked for the methods grpc-js's lines are handed to. */
function loggerOption(logger: Logger | undefined): Logger | undefined {
  if (logger === undefined) return undefined;
  const missing = (['error', 'info', 'verbose'] as const).filter((level) => typeof (logger as Partial<Logger> | null)?.[level] !== 'function');
  if (missing.length > 0) throw invalid(`${FRONTEND} option \`logger\` must have the methods error, info and verbose; it lacks ${missing.join(', ')}`);
  return logger;
}

function bind(grpcServer: Server, host: string, port: number): Promise<number> {
  // An IPv6 address takes brackets before its port.
  const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  return new Promise((resolve, reject) => {
    grpcServer.bindAsync(address, ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound)));
  });
}

/** Stops taking calls and lets those in flight finish, cutting off whatever is left after `timeoutMs`. */
function shutdown(grpcServer: Server, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const cutOff = setTimeout(() => grpcServer.forceShutdown(), timeoutMs);
    grpcServer.tryShutdown(() => {
      clearTimeout(cutOff);
      resolve();
    });
  });
}
