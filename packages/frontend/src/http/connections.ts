import { Buffer } from 'node:buffer';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ClosingConnections } from '../http-listener.js';
import { errorJson } from './http-errors.js';

/**
 * One client connection. Its per-request lists are arrays, not a Map and a Set: a
 * keep-alive connection lives long, and a long-lived Map or Set with an add and a delete
 * per request gets every request and response promoted by V8 (see core's live-set.ts).
 */
interface Connection {
  /** Its requests whose responses have not closed, oldest first (a client may pipeline several). */
  readonly requests: Array<{ readonly req: IncomingMessage; readonly res: ServerResponse }>;
  /** Cancels what its requests started, should the client go before their answers are sent. */
  readonly cancels: Array<() => void>;
  /** The answer to a malformed request, held until the answers to the requests before it are sent. */
  refusal: string | undefined;
}

/**
 * The frontend's client connections and the requests in flight on each: a client that
 * goes cancels every inference it started (pipelined ones too); a malformed request is
 * refused after the answers to the requests before it, never in their midst; and while
 * the frontend closes, each connection ends as soon as nothing it was sent is left to
 * answer.
 */
export class Connections implements ClosingConnections {
  private readonly open = new Map<Socket, Connection>();
  private closing = false;

  constructor(http: Server) {
    http.on('connection', (socket: Socket) => {
      const connection: Connection = { requests: [], cancels: [], refusal: undefined };
      this.open.set(socket, connection);
      socket.once('close', () => {
        this.open.delete(socket);
        for (const cancel of connection.cancels.splice(0)) cancel();
      });
    });
    http.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => this.refuse(error, socket));
  }

  /** Counts a request in until its response closes; while closing, its response says `Connection: close`. */
  accept(req: IncomingMessage, res: ServerResponse): void {
    const connection = this.open.get(req.socket);
    if (!connection) return;
    const entry = { req, res };
    connection.requests.push(entry);
    if (this.closing) res.shouldKeepAlive = false;
    res.once('close', () => {
      remove(connection.requests, entry);
      this.settle(req.socket, connection);
    });
  }

  /** Calls `cancel` if the client's connection closes (or has closed) before `res` is sent in full. */
  cancelOnDisconnect(req: IncomingMessage, res: ServerResponse, cancel: () => void): void {
    const connection = this.open.get(req.socket);
    if (!connection || req.socket.destroyed) return cancel();
    connection.cancels.push(cancel);
    res.once('finish', () => remove(connection.cancels, cancel));
  }

  /**
   * From now on no connection is kept alive: the newest answer on each says
   * `Connection: close` (or, already under way, the connection ends after it), idle
   * connections end now, and so do those whose only requests are still being uploaded
   * (not yet accepted).
   */
  beginClosing(): void {
    this.closing = true;
    for (const [socket, connection] of this.open) {
      const newest = connection.requests.at(-1)?.res;
      if (newest && !newest.headersSent) newest.shouldKeepAlive = false;
      this.settle(socket, connection);
    }
  }

  /** Cuts every connection off, whatever it has in flight. */
  destroyAll(): void {
    for (const socket of this.open.keys()) socket.destroy();
  }

  /** After a request's answer, or on closing: the held refusal goes out once only requests that never arrived in full are left. */
  private settle(socket: Socket, connection: Connection): void {
    // The common case, after every answer: nothing held, not closing, so nothing to look at.
    if (connection.refusal === undefined && !this.closing) return;
    const onlyIncomplete = connection.requests.every(({ req }) => !req.complete);
    if (connection.refusal !== undefined && onlyIncomplete) {
      if (socket.writable) socket.end(connection.refusal);
      connection.refusal = undefined;
    } else if (this.closing && connection.requests.length === 0) {
      socket.destroySoon();
    } else if (this.closing && onlyIncomplete) {
      socket.destroy();
    }
  }

  /** Node's parser refused a request (a truncated body, bytes that start no request): say why, then close. */
  private refuse(error: NodeJS.ErrnoException, socket: Socket): void {
    const connection = this.open.get(socket);
    if (error.code === 'ECONNRESET' || !socket.writable || !connection) {
      socket.destroy();
      return;
    }
    connection.refusal = refusal(error);
    this.settle(socket, connection);
  }
}

/** Takes `item` out of `list` (a connection's few requests in flight), where it is. */
function remove<T>(list: T[], item: T): void {
  const at = list.indexOf(item);
  if (at !== -1) list.splice(at, 1);
}

/** The raw answer to a request Node's parser refused: the status and the reason, and the connection closes. */
function refusal(error: NodeJS.ErrnoException): string {
  const [status, reason, message] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'Request Header Fields Too Large', 'the request headers are too large']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'Request Timeout', 'the request was not received in time']
        : error.code === 'HPE_INVALID_EOF_STATE'
          ? [400, 'Bad Request', 'the connection ended before the request did: its body is shorter than its Content-Length']
          : [400, 'Bad Request', `malformed HTTP request (${error.message}); after a request on this connection, its body may have been longer than its Content-Length`];
  const body = errorJson(new Error(message));
  return `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
}
