import { Buffer } from 'node:buffer';
import type { IncomingMessage } from 'node:http';
import { InferenceError } from '@tritium/core';
import { decodeBody } from './compression.js';
import { HttpError } from './http-errors.js';
import type { JsonParseOptions } from './json-parser.js';
import { parseJsonObject, type JsonObject } from './request-json.js';

/**
 * What a body holds, which decides Triton's words for one over the size limit: an
 * inference request (JSON, JSON and binary inputs, or one raw input, as its
 * Inference-Header-Content-Length says) or JSON alone.
 */
export type BodyHolds = 'inference' | 'json';

/** Triton's limit on the chunks of a chunked body (kMaxChunkedChunks): each costs it a buffer, and here an event. */
export const MAX_BODY_CHUNKS = 65_536;

/**
 * The request body, decompressed, of at most `limit` bytes. A declared Content-Length
 * over the limit is refused before any of the body is read, and a body without one is
 * refused as soon as it passes the limit, or, chunked, past MAX_BODY_CHUNKS chunks;
 * either way the connection closes, as the rest of the body is not read. A single chunk
 * is used as it is, without a copy.
 */
export async function requestBody(req: IncomingMessage, limit: number, holds: BodyHolds): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge(req, holds, Number(declared), limit);
  const body = await new Promise<Buffer>((resolve, reject) => {
    const segments = new BodySegments(declared === undefined ? undefined : Number(declared));
    const refuse = (error: HttpError) => {
      req.removeAllListeners('data');
      req.pause();
      reject(error);
    };
    // Node refuses any Transfer-Encoding but chunked. It hands on a chunk's data as it
    // arrives, so a chunk split across two reads counts twice.
    const chunked = req.headers['transfer-encoding'] !== undefined;
    let chunks = 0;
    req.on('data', (chunk: Buffer) => {
      if (segments.size + chunk.length > limit) refuse(tooLarge(req, holds, undefined, limit));
      else if (chunked && chunk.length > 0 && ++chunks > MAX_BODY_CHUNKS) refuse(tooManyChunks());
      else segments.add(chunk);
    });
    req.once('end', () => resolve(segments.joined()));
    // The client went away (or the parser refused the rest of the request, and answered it).
    req.once('error', () => reject(new InferenceError('CANCELLED', 'the client closed the connection before the request body was complete')));
  });
  const encoding = req.headers['content-encoding'];
  return encoding === undefined ? body : decodeBody(body, encoding, limit);
}

/** Bytes per segment at most: well above malloc's mmap threshold, so a segment goes back to the system when freed. */
const SEGMENT_BYTES = 4 * 1024 * 1024;

/**
 * A body as it arrives. Past the first chunk, chunks are copied into segments at once, so
 * that the socket's small chunks are freed and reused as they come: a large body held as
 * a thousand 64 KiB chunks until its end would leave that much of the heap fragmented,
 * resident long after the body is gone.
 */
class BodySegments {
  private first: Buffer | undefined;
  private readonly full: Buffer[] = [];
  private segment: Buffer | undefined;
  private used = 0;
  size = 0;

  /** `expected`: the declared Content-Length, so that a body smaller than a segment gets a segment of its own size. */
  constructor(private readonly expected: number | undefined) {}

  add(chunk: Buffer): void {
    this.size += chunk.length;
    if (this.first === undefined && this.segment === undefined) {
      this.first = chunk;
      return;
    }
    if (this.first !== undefined) {
      const first = this.first;
      this.first = undefined;
      this.copy(first);
    }
    this.copy(chunk);
  }

  private copy(chunk: Buffer): void {
    for (let at = 0; at < chunk.length; ) {
      if (this.segment === undefined || this.used === this.segment.length) {
        if (this.segment !== undefined) this.full.push(this.segment);
        const remaining = this.expected === undefined ? SEGMENT_BYTES : this.expected - (this.size - chunk.length) - at;
        this.segment = Buffer.allocUnsafeSlow(Math.min(SEGMENT_BYTES, Math.max(remaining, chunk.length - at)));
        this.used = 0;
      }
      const copied = chunk.copy(this.segment, this.used, at);
      this.used += copied;
      at += copied;
    }
  }

  /** The whole body: a single chunk as it is, without a copy. */
  joined(): Buffer {
    if (this.segment === undefined) return this.first ?? Buffer.alloc(0);
    return this.full.length === 0 ? this.segment.subarray(0, this.used) : Buffer.concat([...this.full, this.segment.subarray(0, this.used)], this.size);
  }
}

/** A control request's JSON object; undefined for an empty body, which those requests may send. */
export async function optionalJsonBody(req: IncomingMessage, limit: number, what: string, options?: JsonParseOptions): Promise<JsonObject | undefined> {
  const body = await requestBody(req, limit, 'json');
  return body.length === 0 ? undefined : parseJsonObject(body, what, options);
}

/**
 * Triton's words for a body over the limit, as it finds each kind too large: the JSON
 * (all the body, or the part Inference-Header-Content-Length says), one raw input (a
 * length of 0), or, here only, JSON and binary inputs together (Triton reads any size
 * of binary inputs). `size`: the body's declared length, if known.
 */
function tooLarge(req: IncomingMessage, holds: BodyHolds, size: number | undefined, limit: number): HttpError {
  const header = holds === 'inference' ? req.headers['inference-header-content-length'] : undefined;
  const jsonLength = header === undefined ? undefined : Number(header);
  const bytes = (length: number | undefined) => (length === undefined ? `more than ${limit} bytes` : `${length} bytes`);
  let text: string;
  if (jsonLength === 0) {
    text = `Raw input has a byte_size (${bytes(size)}) that exceeds the maximum allowed value of ${limit} bytes.`;
  } else if (jsonLength !== undefined && jsonLength <= limit) {
    text = `request size of ${bytes(size)} exceeds the maximum allowed input size of ${limit} bytes.`;
  } else {
    text = `request JSON size of ${bytes(jsonLength ?? size)} exceeds the maximum allowed input size of ${limit} bytes.`;
  }
  return new HttpError(400, `${text} Use --http-max-input-size to increase the limit.`, { connection: 'close' });
}

function tooManyChunks(): HttpError {
  return new HttpError(400, `Chunked request body exceeds maximum of ${MAX_BODY_CHUNKS} non-empty chunks. Send fewer or larger HTTP chunks.`, { connection: 'close' });
}
