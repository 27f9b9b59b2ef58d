import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { RawGrpcClient } from './grpc-wire.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const SERVER = 'packages/frontend/test/helpers/grpc-server-process.ts';

/** The gRPC test server (grpc-server-process.ts) in a child process with a heap of `heapMiB`, and a raw client of it. */
export interface GrpcServerChild {
  readonly client: RawGrpcClient;
  /** What the child printed so far, for messages when it died. */
  output(): string;
  stop(): Promise<void>;
}

async function startGrpcServerChild(heapMiB: number): Promise<GrpcServerChild> {
  const server = spawn(process.execPath, [`--max-old-space-size=${heapMiB}`, '--import', 'tsx', SERVER], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  for (const stream of [server.stdout, server.stderr]) stream.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    server.stdout.on('data', () => {
      const match = output.match(/^PORT (\d+)$/m);
      if (match) resolve(Number(match[1]));
    });
    server.once('exit', () => reject(new Error(`the server process exited:\n${output}`)));
  });
  const client = new RawGrpcClient(port);
  return {
    client,
    output: () => output,
    async stop() {
      client.close();
      if (server.exitCode === null && server.signalCode === null) {
        server.kill('SIGTERM');
        await once(server, 'exit');
      }
    },
  };
}

/** The child server for the tests of the calling file: started before them, stopped after; read `current` inside tests. */
export function useGrpcServerChild(heapMiB: number): { readonly current: GrpcServerChild } {
  let child: GrpcServerChild | undefined;
  beforeAll(async () => {
    child = await startGrpcServerChild(heapMiB);
  }, 60_000);
  afterAll(() => child?.stop());
  return {
    get current() {
      if (!child) throw new Error('the gRPC server child has not started');
      return child;
    },
  };
}
