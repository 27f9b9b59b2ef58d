import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InferenceError } from '@tritium/core';

/** How a listener's client connections end once it closes: each service keeps its own. */
export interface ClosingConnections {
  /** From now on no connection is kept alive: idle ones end at once, the others once their answers are sent. */
  beginClosing(): void;
  /** Cuts every connection off, whatever it has in flight. */
  destroyAll(): void;
}

export interface HttpListenerOptions {
  /** Names the service in errors, e.g. "HTTP frontend". */
  readonly frontend: string;
  readonly host: string;
  readonly port: number;
  /** How long close() lets connections finish before it cuts them off. */
  readonly closeTimeoutMs: number;
}

/** A node:http server that is listening. */
export interface HttpListener {
  /** The bound port (the one chosen when 0 was asked for). */
  readonly port: number;
  /**
   * Stops listening, lets the connections end as they end them, cuts off those left
   * after closeTimeoutMs, and resolves once every one is closed. Every call gets the same promise.
   */
  close(): Promise<void>;
}

/** Starts `http` listening; rejects (UNAVAILABLE, saying which socket and why) when it cannot. */
export async function listenHttp(http: Server, connections: ClosingConnections, options: HttpListenerOptions): Promise<HttpListener> {
  const { frontend, host, closeTimeoutMs } = options;
  const port = await new Promise<number>((resolve, reject) => {
    http.once('error', (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'EADDRINUSE' ? 'already in use' : error.message;
      reject(new InferenceError('UNAVAILABLE', `${frontend}: socket '${host}:${options.port}' ${reason}`, { cause: error }));
    });
    http.listen(options.port, host, () => resolve((http.address() as AddressInfo).port));
  });
  let closed: Promise<void> | undefined;
  const close = () =>
    new Promise<void>((resolve) => {
      const cutOff = setTimeout(() => connections.destroyAll(), closeTimeoutMs);
      http.close(() => {
        clearTimeout(cutOff);
        resolve();
      });
      connections.beginClosing();
    });
  return { port, close: () => (closed ??= close()) };
}
