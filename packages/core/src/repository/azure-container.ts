import { createWriteStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ContainerClient } from '@azure/storage-blob';
import { InferenceError } from '../errors.js';
import type { AzureLocation } from './azure-location.js';
import { sdkImportFailure } from './missing-package.js';
import type { ObjectStore, StoredObject } from './object-store.js';

type BlobModule = Pick<typeof import('@azure/storage-blob'), 'BlobServiceClient' | 'StorageSharedKeyCredential' | 'AnonymousCredential'>;
/** How the Azure SDK is loaded: `import('@azure/storage-blob')`, or in a test a stand-in. */
export type ImportBlob = () => Promise<BlobModule>;

const importBlob: ImportBlob = () => import('@azure/storage-blob');

// Few, short retries: an unreachable account should fail a start in seconds, not minutes.
const RETRY_OPTIONS = { maxTries: 3, retryDelayInMs: 200, maxRetryDelayInMs: 1000 };

/**
 * The container behind an as:// repository, read through @azure/storage-blob (an
 * optional peer dependency of core, loaded on first use). Credentials as Triton reads
 * them: AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY (shared key); else Azure's own
 * AZURE_STORAGE_CONNECTION_STRING, which also reaches an emulator (Azurite); else
 * anonymous, for a public container. Failures name the repository and the container,
 * never a key.
 */
export class AzureContainer implements ObjectStore {
  private client: Promise<ContainerClient> | undefined;
  readonly mountVariable = 'TRITON_AZURE_MOUNT_DIRECTORY';
  readonly cacheFolders: readonly string[];

  constructor(
    readonly location: AzureLocation,
    private readonly load: ImportBlob = importBlob,
  ) {
    this.cacheFolders = ['as', location.account, location.container];
  }

  address(key: string): string {
    return `as://${this.location.account}/${this.location.container}/${key}`;
  }

  async objects(prefix: string): Promise<StoredObject[]> {
    const container = await this.connect();
    return this.call(async () => {
      const objects: StoredObject[] = [];
      for await (const blob of container.listBlobsFlat({ prefix })) {
        objects.push({ key: blob.name, etag: blob.properties.etag ?? '', size: blob.properties.contentLength ?? 0 });
      }
      return objects;
    }, `prefix '${prefix}'`);
  }

  async download(object: StoredObject, file: string): Promise<void> {
    const container = await this.connect();
    return this.call(async () => {
      const response = await container.getBlobClient(object.key).download();
      await pipeline(response.readableStreamBody as Readable, createWriteStream(file));
    }, `blob '${object.key}'`);
  }

  /** Nothing to release: the SDK has no close, and its idle connections end with the process. */
  async close(): Promise<void> {}

  private connect(): Promise<ContainerClient> {
    this.client ??= this.load().then(
      (sdk) => this.containerClient(sdk),
      (error: unknown) => {
        throw sdkImportFailure(this.location.url, '@azure/storage-blob', error);
      },
    );
    return this.client;
  }

  private containerClient(sdk: BlobModule): ContainerClient {
    const { account, container } = this.location;
    const env = process.env;
    const authType = env['AZURE_STORAGE_AUTH_TYPE'];
    if (authType && authType !== 'key') {
      throw new InferenceError('UNSUPPORTED', `model repository '${this.location.url}': AZURE_STORAGE_AUTH_TYPE '${authType}' (managed identity, DefaultAzureCredential) is not supported; use AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY`);
    }
    const options = { retryOptions: RETRY_OPTIONS };
    const connectionString = env['AZURE_STORAGE_CONNECTION_STRING'];
    const key = env['AZURE_STORAGE_KEY'];
    const service = key
      ? new sdk.BlobServiceClient(`https://${account}.blob.core.windows.net`, new sdk.StorageSharedKeyCredential(env['AZURE_STORAGE_ACCOUNT'] || account, key), options)
      : connectionString
        ? sdk.BlobServiceClient.fromConnectionString(connectionString, options)
        : new sdk.BlobServiceClient(`https://${account}.blob.core.windows.net`, new sdk.AnonymousCredential(), options);
    return service.getContainerClient(container);
  }

  /** Runs one SDK call, its failure told as the repository's, naming the container and what was read. */
  private async call<T>(send: () => Promise<T>, what: string): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw this.failure(error, what);
    }
  }

  private failure(error: unknown, what: string): InferenceError {
    const { url, container } = this.location;
    const code = (error as { code?: unknown } | null)?.code;
    const status = (error as { statusCode?: number } | null)?.statusCode;
    const prefix = `cannot read model repository '${url}'`;
    if (code === 'ContainerNotFound') return new InferenceError('NOT_FOUND', `${prefix}: container '${container}' does not exist`);
    if (status === 403 || status === 401) {
      // The service's words quote the string it signed; only the error's code is safe to repeat.
      return new InferenceError('UNAVAILABLE', `${prefix}: access to container '${container}' was refused (${String(code)}): check the Azure Storage credentials`);
    }
    if (status !== undefined) return new InferenceError('UNAVAILABLE', `${prefix}: reading ${what} of container '${container}' failed with HTTP ${status} (${String(code)})`);
    const text = error instanceof Error ? error.message : String(error);
    return new InferenceError('UNAVAILABLE', `${prefix}: reading ${what} of container '${container}' failed: ${text}`);
  }
}
