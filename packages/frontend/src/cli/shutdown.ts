import { constants } from 'node:os';
import type { Logger } from '@tritium/core';
import type { RunningService } from './serve.js';

/** Time past the exit timeout for closing the services and finalizing models; a shutdown that takes longer has failed. */
export const SHUTDOWN_GRACE_MS = 10_000;

/**
 * How long closing a service waits for calls still open once the server has drained
 * (a gRPC stream a client keeps open, say) before cutting them off: inside the grace.
 */
export const SERVICE_CLOSE_TIMEOUT_MS = SHUTDOWN_GRACE_MS / 2;

/**
 * Triton's graceful shutdown. The server stops first: readiness fails at once while
 * every service still answers (so health probes see it), new requests are refused
 * except those continuing a live sequence, and in-flight work has up to `exitTimeoutMs`
 * to finish. Then the services close. Resolves true when every step succeeded within
 * `exitTimeoutMs + graceMs`; false (each failure logged) otherwise.
 */
export async function shutDown(service: RunningService, exitTimeoutMs: number, logger: Logger, graceMs = SHUTDOWN_GRACE_MS): Promise<boolean> {
  const steps = async () => {
    logger.info(`Waiting for in-flight requests to complete (up to ${exitTimeoutMs / 1000} s).`);
    const stopped = await succeeded(service.server.stop(), 'stopping the server', logger);
    const closed = await Promise.all(service.frontends.map(({ name, frontend }) => succeeded(frontend.close(), `closing ${name}`, logger)));
    return stopped && closed.every(Boolean);
  };
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<false>((resolve) => {
    timer = setTimeout(() => {
      logger.error(`shutdown did not finish within ${(exitTimeoutMs + graceMs) / 1000} s`);
      resolve(false);
    }, exitTimeoutMs + graceMs);
  });
  try {
    return await Promise.race([steps(), deadline]);
  } finally {
    clearTimeout(timer);
  }
}

async function succeeded(step: Promise<void>, what: string, logger: Logger): Promise<boolean> {
  try {
    await step;
    return true;
  } catch (error) {
    logger.error(`${what} failed: ${error instanceof Error ? error.message : String(error)}`);
    return false;
  }
}

/**
 * Resolves at the first SIGTERM or SIGINT, logged as Triton does. A second one exits at
 * once with status 1, for an operator who will not wait for the drain.
 */
export function stopSignal(logger: Logger): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    let received = false;
    const handle = (signal: NodeJS.Signals) => {
      if (received) {
        logger.error(`Signal (${constants.signals[signal]}) received again: exiting now, without waiting for in-flight requests`);
        process.exit(1);
      }
      received = true;
      logger.info(`Signal (${constants.signals[signal]}) received.`);
      resolve(signal);
    };
    process.on('SIGINT', handle).on('SIGTERM', handle);
  });
}
