import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { status } from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectStatus } from './helpers/grpc-fixture.js';
import { inferResponseType, lengthDelimited, RawGrpcClient, requestWithContents } from './helpers/grpc-wire.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SERVER = 'packages/frontend/test/helpers/grpc-server-process.ts';
/**
 * The server's JavaScript heap. Decoded into a JavaScript array (as before), COUNT bools
 * take 8 bytes each, twice over this; read into a typed array, they stay outside the heap.
 */
const HEAP_MIB = 160;
const COUNT = 40_000_000;

let server: ChildProcess;
let output = '';
let client: RawGrpcClient;

beforeAll(async () => {
  server = spawn(process.execPath, [`--max-old-space-size=${HEAP_MIB}`, '--import', 'tsx', SERVER], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [server.stdout!, server.stderr!]) stream.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    server.stdout!.on('data', () => {
      const match = output.match(/^PORT (\d+)$/m);
      if (match) resolve(Number(match[1]));
    });
    server.once('exit', () => reject(new Error(`the server process exited:\n${output}`)));
  });
  client = new RawGrpcClient(port);
}, 60_000);

afterAll(async () => {
  client?.close();
  if (server.exitCode === null && server.signalCode === null) {
    server.kill('SIGTERM');
    await once(server, 'exit');
  }
});

/** A request for the BOOL identity model with COUNT packed bools, all true but the last. */
function boolsRequest(shape: number[]): Buffer {
  const bools = Buffer.alloc(COUNT, 1);
  bools[COUNT - 1] = 0;
  return requestWithContents('bools', { name: 'IN', datatype: 'BOOL', shape }, lengthDelimited(1, [bools]));
}

async function expectAlive(): Promise<void> {
  // An empty ServerLiveRequest, answered by ServerLiveResponse { live: true }.
  expect(await client.call('ServerLive', Buffer.alloc(0)), `the server process died:\n${output}`).toEqual(Buffer.from([8, 1]));
}

describe(`a gRPC server with a ${HEAP_MIB} MiB heap`, () => {
  it(`refuses ${COUNT / 1e6} M packed bool_contents for a shape of 4 before decoding them, and lives`, async () => {
    await expectStatus(client.call('ModelInfer', boolsRequest([4])), status.INVALID_ARGUMENT, `^input 'IN': expected 4 elements for shape \\[4\\], got ${COUNT} in bool_contents$`);
    await expectAlive();
  });

  it(`refuses ${COUNT / 2e6} M empty outputs before decoding them, and lives`, async () => {
    const emptyOutputs = Buffer.alloc(COUNT);
    for (let i = 0; i < COUNT; i += 2) emptyOutputs[i] = (6 << 3) | 2; // outputs {}, a tag and a length of 0
    await expectStatus(client.call('ModelInfer', emptyOutputs), status.INVALID_ARGUMENT, /more than 100000 inputs, outputs/);
    await expectAlive();
  });

  it(`infers from ${COUNT / 1e6} M packed bool_contents, and lives`, async () => {
    const response = inferResponseType.decode(await client.call('ModelInfer', boolsRequest([COUNT]))) as unknown as { raw_output_contents: Uint8Array[] };
    const out = response.raw_output_contents[0]!;
    expect([out.length, out[0], out[COUNT - 2], out[COUNT - 1]]).toEqual([COUNT, 1, 1, 0]);
    await expectAlive();
  });
});
