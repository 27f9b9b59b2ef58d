import { fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { directoryObjects } from './directory-objects.js';

/** s3rver's one account. */
export const S3_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/** An S3-compatible server (s3rver) on loopback, storing in a temp directory; `close()` removes both. */
export class TestS3Server {
  private constructor(
    private readonly stopServer: () => Promise<unknown>,
    private readonly directory: string,
    /** `host:port`, as an s3:// path names it. */
    readonly host: string,
    private readonly client: S3Client,
  ) {}

  /** s3rver in this process. */
  static async start(): Promise<TestS3Server> {
    const directory = await mkdtemp(join(tmpdir(), 'tritium-s3rver-'));
    const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
    const { port } = await server.run();
    return TestS3Server.connect(() => server.close(), directory, port);
  }

  /** s3rver in a child process, so that its own work does not share a benchmark's thread. */
  static async startInChild(): Promise<TestS3Server> {
    const directory = await mkdtemp(join(tmpdir(), 'tritium-s3rver-'));
    const child = fork(fileURLToPath(new URL('./s3rver-child.mjs', import.meta.url)), [directory]);
    const [port] = (await once(child, 'message')) as [number];
    return TestS3Server.connect(async () => {
      child.kill();
      if (child.exitCode === null && child.signalCode === null) await once(child, 'exit');
    }, directory, port);
  }

  private static connect(stopServer: () => Promise<unknown>, directory: string, port: number): TestS3Server {
    const host = `127.0.0.1:${port}`;
    const client = new S3Client({ endpoint: `http://${host}`, forcePathStyle: true, region: 'us-east-1', credentials: S3_CREDENTIALS, requestChecksumCalculation: 'WHEN_REQUIRED' });
    return new TestS3Server(stopServer, directory, host, client);
  }

  async createBucket(bucket: string): Promise<void> {
    await this.client.send(new CreateBucketCommand({ Bucket: bucket }));
  }

  async put(bucket: string, key: string, body: string | Uint8Array): Promise<void> {
    await this.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
  }

  /** Uploads every file under `directory` to `bucket`, keys under `prefix`. */
  async upload(directory: string, bucket: string, prefix = ''): Promise<void> {
    for (const { key, body } of await directoryObjects(directory, prefix)) await this.put(bucket, key, body);
  }

  async keys(bucket: string, prefix = ''): Promise<string[]> {
    const page = await this.client.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix }));
    return (page.Contents ?? []).map((object) => object.Key!);
  }

  async deleteObjects(bucket: string, prefix: string): Promise<void> {
    for (const key of await this.keys(bucket, prefix)) await this.client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
  }

  /** Empties and deletes the bucket. */
  async deleteBucket(bucket: string): Promise<void> {
    await this.deleteObjects(bucket, '');
    await this.client.send(new DeleteBucketCommand({ Bucket: bucket }));
  }

  async close(): Promise<void> {
    this.client.destroy();
    await this.stopServer();
    await rm(this.directory, { recursive: true, force: true });
  }
}
