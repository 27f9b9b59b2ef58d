import { createRequire } from 'node:module';
import { format } from 'node:util';
import { setLogger } from '@grpc/grpc-js';
import type { Logger } from '@tritium/core';

/** What @grpc/grpc-js's setLogger takes: it calls `error`, `info` and `debug`. */
type GrpcLogger = Partial<Console>;

/** Names the source of a forwarded line, since grpc-js's lines carry none. */
const SOURCE = '@grpc/grpc-js: ';

/**
 * grpc-js's own default, written again for when its logger before ours cannot be read:
 * each line to stderr, after a severity letter.
 */
const GRPC_DEFAULT_LOGGER: GrpcLogger = {
  error: (message?: unknown, ...rest: unknown[]) => console.error(`E ${String(message)}`, ...rest),
  info: (message?: unknown, ...rest: unknown[]) => console.error(`I ${String(message)}`, ...rest),
  debug: (message?: unknown, ...rest: unknown[]) => console.error(`D ${String(message)}`, ...rest),
};

/** The loggers of the frontends routing grpc-js's lines now, the most recently started last. */
const routes: Array<{ readonly logger: Logger }> = [];
/** grpc-js's logger before the first route was added, put back when the last one is removed. */
let before: GrpcLogger | undefined;

/** Hands each grpc-js line to the most recent route's logger; grpc-js's debug lines become verbose ones. */
const forwarder: GrpcLogger = {
  error: (...args: unknown[]) => forward('error', args),
  info: (...args: unknown[]) => forward('info', args),
  debug: (...args: unknown[]) => forward('verbose', args),
};

function forward(level: 'error' | 'info' | 'verbose', args: unknown[]): void {
  const route = routes.at(-1);
  if (route) route.logger[level](SOURCE + format(...args));
  else GRPC_DEFAULT_LOGGER[level === 'verbose' ? 'debug' : level]?.(...args);
}

/**
 * Sends @grpc/grpc-js's log lines to `logger` until the returned function is called.
 *
 * grpc-js has one logger for the whole process (its clients' lines go there too), so
 * with several routes at once the most recently added one that is still in place gets
 * every line. grpc-js's verbosity is left alone (errors only, unless GRPC_VERBOSITY or
 * GRPC_NODE_VERBOSITY says otherwise). When the last route is removed, grpc-js gets back
 * the logger it had before the first, unless the application has set another meanwhile.
 */
export function routeGrpcLogging(logger: Logger): () => void {
  const route = { logger };
  if (routes.length === 0) {
    before = readGrpcLogger();
    setLogger(forwarder);
  }
  routes.push(route);
  let removed = false;
  return () => {
    if (removed) return;
    removed = true;
    routes.splice(routes.indexOf(route), 1);
    if (routes.length > 0) return;
    const now = readGrpcLogger();
    if (now === undefined || now === forwarder) setLogger(before ?? GRPC_DEFAULT_LOGGER);
    before = undefined;
  };
}

/**
 * grpc-js's logger now, or undefined where it cannot be read: grpc-js exports no getter,
 * so this reads its logging module, which a later grpc-js may move.
 */
function readGrpcLogger(): GrpcLogger | undefined {
  try {
    const logging = createRequire(import.meta.url)('@grpc/grpc-js/build/src/logging.js') as { getLogger?: () => GrpcLogger };
    return typeof logging.getLogger === 'function' ? logging.getLogger() : undefined;
  } catch {
    return undefined;
  }
}
