import type { Buffer } from 'node:buffer';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { invalid } from '../wire-values.js';
import { HttpError } from './http-errors.js';

/** The encodings Triton reads and writes ('deflate' is the zlib format, as HTTP means it). */
export type ContentEncoding = 'gzip' | 'deflate';

// Asynchronous, so (de)compressing a large body runs on libuv's pool, not the event loop.
const DECODERS = { gzip: promisify(zlib.gunzip), deflate: promisify(zlib.inflate) };
const ENCODERS = { gzip: promisify(zlib.gzip), deflate: promisify(zlib.deflate) };

/**
 * The body as sent before its Content-Encoding. Decompressed size counts against the
 * limit too, so a small compressed body cannot unfold into an unbounded one.
 */
export async function decodeBody(body: Buffer, contentEncoding: string, limit: number): Promise<Buffer> {
  const encoding = contentEncoding.trim().toLowerCase();
  if (!encoding || encoding === 'identity') return body;
  if (encoding !== 'gzip' && encoding !== 'deflate') {
    throw new HttpError(501, `unsupported Content-Encoding '${contentEncoding}': a request body may be gzip, deflate or identity`, {
      'accept-encoding': 'gzip, deflate',
    });
  }
  try {
    return await DECODERS[encoding](body, { maxOutputLength: limit });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw invalid(`Decompressed data size exceeds the maximum allowed value of ${limit} bytes. Use --http-max-input-size to increase the limit.`);
    }
    throw invalid(`unable to decompress the ${encoding} request body: ${(error as Error).message}`);
  }
}

/**
 * The response encoding for an Accept-Encoding header, as Triton picks it: the one of
 * gzip, deflate and identity with the highest q value, the first listed on a tie.
 */
export function responseEncoding(acceptEncoding: string | undefined): ContentEncoding | undefined {
  if (!acceptEncoding) return undefined;
  let best: string = 'identity';
  let bestWeight = 0;
  for (const entry of acceptEncoding.split(',')) {
    const [coding = '', ...params] = entry.split(';');
    const type = coding.trim().toLowerCase();
    if (type !== 'gzip' && type !== 'deflate' && type !== 'identity') continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    if (Number.isFinite(weight) && weight > bestWeight) {
      best = type;
      bestWeight = weight;
    }
  }
  return best === 'identity' ? undefined : (best as ContentEncoding);
}

export function compress(body: Uint8Array, encoding: ContentEncoding): Promise<Buffer> {
  return ENCODERS[encoding](body);
}
