import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { BlobServiceClient } from '@azure/storage-blob';
import { directoryObjects } from './directory-objects.js';

/** Azurite's well-known development account. */
export const AZURITE_ACCOUNT = 'devstoreaccount1';
export const AZURITE_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

/** Azurite's blob service (the Azure Storage emulator) on loopback, in memory, in a child process; `close()` ends it. */
export class TestAzurite {
  private constructor(
    private readonly child: ChildProcess,
    /** The connection string Azure's tools take (AZURE_STORAGE_CONNECTION_STRING). */
    readonly connectionString: string,
    private readonly service: BlobServiceClient,
  ) {}

  static async start(): Promise<TestAzurite> {
    const main = createRequire(import.meta.url).resolve('azurite/dist/src/blob/main.js');
    const child = spawn(process.execPath, [main, '--blobHost', '127.0.0.1', '--blobPort', '0', '--inMemoryPersistence', '--skipApiVersionCheck'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const port = await new Promise<number>((resolve, reject) => {
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const match = /listens on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
        if (match) resolve(Number(match[1]));
      });
      child.on('exit', () => reject(new Error(`azurite exited: ${output}`)));
    });
    const connectionString = `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};BlobEndpoint=http://127.0.0.1:${port}/${AZURITE_ACCOUNT};`;
    return new TestAzurite(child, connectionString, BlobServiceClient.fromConnectionString(connectionString));
  }

  async createContainer(container: string): Promise<void> {
    await this.service.createContainer(container);
  }

  async put(container: string, key: string, body: string | Buffer): Promise<void> {
    const content = typeof body === 'string' ? Buffer.from(body) : body;
    await this.service.getContainerClient(container).getBlockBlobClient(key).upload(content, content.length);
  }

  /** Uploads every file under `directory` to `container`, keys under `prefix`. */
  async upload(directory: string, container: string, prefix = ''): Promise<void> {
    for (const { key, body } of await directoryObjects(directory, prefix)) await this.put(container, key, body);
  }

  async deleteContainer(container: string): Promise<void> {
    await this.service.deleteContainer(container);
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    // In memory, nothing to lose; a graceful stop would wait on the clients' kept-alive connections.
    this.child.kill('SIGKILL');
    await once(this.child, 'exit');
  }
}
