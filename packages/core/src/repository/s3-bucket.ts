import { createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import type { ListObjectsV2CommandOutput, S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import { InferenceError } from '../errors.js';
import { sdkImportFailure } from './missing-package.js';
import type { ObjectStore, StoredObject } from './object-store.js';
import type { S3Location } from './s3-location.js';

type S3Module = Pick<typeof import('@aws-sdk/client-s3'), 'S3Client' | 'ListObjectsV2Command' | 'GetObjectCommand'>;
/** How the AWS SDK is loaded: `import('@aws-sdk/client-s3')`, or in a test a stand-in that fails as a missing package does. */
export type ImportS3 = () => Promise<S3Module>;

const importS3: ImportS3 = () => import('@aws-sdk/client-s3');

// Failures that mean the credentials were refused, not that the bucket is unreadable otherwise.
const REFUSED_CREDENTIALS = new Set(['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'ExpiredToken', 'InvalidToken', 'CredentialsProviderError']);

/**
 * The bucket behind an s3:// repository, read through @aws-sdk/client-s3 (an optional
 * peer dependency of core, loaded on first use). Credentials come from the SDK's default
 * chain: the AWS_* environment variables, then the shared credentials and config files
 * (AWS_PROFILE), then the container and instance roles. Every failure is an
 * InferenceError naming the repository and the bucket, never a credential.
 */
export class S3Bucket implements ObjectStore {
  private client: Promise<{ sdk: S3Module; client: S3Client }> | undefined;
  readonly mountVariable = 'TRITON_AWS_MOUNT_DIRECTORY';
  readonly cacheFolders: readonly string[];

  constructor(
    readonly location: S3Location,
    private readonly load: ImportS3 = importS3,
  ) {
    const server = location.endpoint ? location.endpoint.replace(/^https?:\/\//, '').replace(/[^0-9a-zA-Z.-]/g, '_') : 'aws';
    this.cacheFolders = ['s3', server, location.bucket];
  }

  address(key: string): string {
    return `s3://${this.location.bucket}/${key}`;
  }

  async objects(prefix: string): Promise<StoredObject[]> {
    const objects: StoredObject[] = [];
    await this.list(prefix, (page) => {
      for (const { Key, ETag, Size } of page.Contents ?? []) objects.push({ key: Key!, etag: ETag ?? '', size: Size ?? 0 });
    });
    return objects;
  }

  async download(object: StoredObject, file: string): Promise<void> {
    const { sdk, client } = await this.connect();
    // A connection cut while the body streams fails here too, naming the object.
    return this.call(async () => {
      const response = await client.send(new sdk.GetObjectCommand({ Bucket: this.location.bucket, Key: object.key }));
      await pipeline(response.Body as Readable, createWriteStream(file));
    }, `object '${object.key}'`);
  }

  async close(): Promise<void> {
    const connected = await this.client?.catch(() => undefined);
    connected?.client.destroy();
  }

  private async list(prefix: string, take: (page: ListObjectsV2CommandOutput) => void): Promise<void> {
    const { sdk, client } = await this.connect();
    let token: string | undefined;
    do {
      const page = await this.call(
        () => client.send(new sdk.ListObjectsV2Command({ Bucket: this.location.bucket, Prefix: prefix, ContinuationToken: token })),
        `prefix '${prefix}'`,
      );
      take(page);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }

  private connect(): Promise<{ sdk: S3Module; client: S3Client }> {
    this.client ??= this.load().then(
      (sdk) => ({ sdk, client: new sdk.S3Client(clientConfig(this.location)) }),
      (error: unknown) => {
        throw sdkImportFailure(this.location.url, '@aws-sdk/client-s3', error);
      },
    );
    return this.client;
  }

  /** Runs one SDK call, its failure told as the repository's, naming the bucket and what was read. */
  private async call<T>(send: () => Promise<T>, what: string): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw this.failure(error, what);
    }
  }

  private failure(error: unknown, what: string): InferenceError {
    const { url, bucket } = this.location;
    const name = (error as { name?: unknown } | null)?.name;
    const status = (error as { $metadata?: { httpStatusCode?: number } } | null)?.$metadata?.httpStatusCode;
    const prefix = `cannot read model repository '${url}'`;
    if (name === 'NoSuchBucket') return new InferenceError('NOT_FOUND', `${prefix}: bucket '${bucket}' does not exist`);
    if (status === 403 || (typeof name === 'string' && REFUSED_CREDENTIALS.has(name))) {
      // The service's own words may quote the request; only the error's name is safe to repeat.
      return new InferenceError('UNAVAILABLE', `${prefix}: access to bucket '${bucket}' was refused (${String(name)}): check the AWS credentials`);
    }
    if (status !== undefined) return new InferenceError('UNAVAILABLE', `${prefix}: reading ${what} of bucket '${bucket}' failed with HTTP ${status} (${String(name)})`);
    // No answer from the service (refused connection, unknown host, missing region): its message names no secret.
    const text = error instanceof Error ? error.message : String(error);
    return new InferenceError('UNAVAILABLE', `${prefix}: reading ${what} of bucket '${bucket}' failed: ${text}`);
  }
}

/**
 * The client as Triton configures it: a private endpoint is addressed path-style, and
 * its region is AWS_DEFAULT_REGION (AWS_REGION, then the SDK's own lookup otherwise;
 * 'us-east-1' for a private endpoint that has none). Checksums only where S3 requires
 * them, so that S3-compatible servers without the newer checksum headers answer.
 */
function clientConfig({ endpoint }: S3Location): S3ClientConfig {
  const region = process.env['AWS_DEFAULT_REGION'] || process.env['AWS_REGION'] || (endpoint ? 'us-east-1' : undefined);
  return {
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    ...(region ? { region } : {}),
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  };
}
