import { Buffer } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { InferenceError } from '@tritium/core';
import { decodeBody } from './compression.js';
import { HttpError } from './http-errors.js';
import { parseJsonObject, type JsonObject } from './request-json.js';

/**
 * The request body, decompressed, of at most `limit` bytes. A declared Content-Length
 * over the limit is refused before any of the body is read, and a body without one is
 * refused as soon as it passes the limit; either way the connection closes, as the rest
 * of the body is not read. A single chunk is used as it is, without a copy.
 */
export async function requestBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(`${declared} bytes`, limit);
  const body = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.pause();
        reject(tooLarge(`more than ${limit} bytes`, limit));
      } else {
        chunks.push(chunk);
      }
    });
    req.once('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    // The client went away (or the parser refused the rest of the request, and answered it).
    req.once('error', () => reject(new InferenceError('CANCELLED', 'the client closed the connection before the request body was complete')));
  });
  const encoding = req.headers['content-encoding'];
  return encoding === undefined ? body : decodeBody(body, encoding, limit);
}

/** A control request's JSON object; undefined for an empty body, which those requests may send. */
export async function optionalJsonBody(req: IncomingMessage, limit: number, what: string): Promise<JsonObject | undefined> {
  const body = await requestBody(req, limit);
  return body.length === 0 ? undefined : parseJsonObject(body.toString('utf8'), what);
}

function tooLarge(size: string, limit: number): HttpError {
  return new HttpError(400, `the request body (${size}) exceeds the maximum of ${limit} bytes (the frontend's bodyLimitBytes)`, { connection: 'close' });
}
