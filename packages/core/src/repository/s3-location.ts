import { InferenceError } from '../errors.js';

/** Where an `s3://` repository is: Triton's `s3://[http://|https://][host:port/]bucket/path`. */
export interface S3Location {
  /** The path as given, for messages. */
  readonly url: string;
  /** A private S3 endpoint (`http://host:port`, or https when the path says so); undefined for AWS itself. */
  readonly endpoint: string | undefined;
  readonly bucket: string;
  /** The repository's key prefix: '' for the bucket's root, else the path with a trailing '/'. */
  readonly prefix: string;
}

const HOST_PORT = /^[0-9a-zA-Z.-]+:[0-9]+$/;
// S3's bucket naming rules, as Triton's path pattern has them.
const BUCKET = /^[0-9a-z.-]{3,63}$/;

/**
 * Parses an `s3://` path as Triton does: a first component `host:port` names a private
 * endpoint, reached over HTTP unless `https://` comes before it; repeated slashes count
 * as one.
 */
export function parseS3Location(url: string): S3Location {
  let rest = url.slice('s3://'.length);
  const scheme = /^(https?):\/\//.exec(rest)?.[1];
  if (scheme) rest = rest.slice(scheme.length + 3);
  const parts = rest.split('/').filter((part) => part !== '');
  const endpoint = parts[0] !== undefined && HOST_PORT.test(parts[0]) ? `${scheme ?? 'http'}://${parts.shift()}` : undefined;
  if (scheme && !endpoint) throw new InferenceError('INVALID_ARG', `model repository '${url}': '${scheme}://' must be followed by host:port`);
  const bucket = parts.shift();
  if (bucket === undefined || !BUCKET.test(bucket)) {
    throw new InferenceError('INVALID_ARG', `model repository '${url}' names no valid bucket: expected s3://[host:port/]bucket/path`);
  }
  if (parts.some((part) => part === '.' || part === '..')) throw new InferenceError('INVALID_ARG', `model repository '${url}': '.' and '..' are not allowed in an S3 path`);
  return { url, endpoint, bucket, prefix: parts.length ? `${parts.join('/')}/` : '' };
}
