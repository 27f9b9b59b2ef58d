import { status } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { expectStatus } from './helpers/grpc-fixture.js';
import { useGrpcServerChild } from './helpers/grpc-server-child.js';
import { inferResponseType, lengthDelimited, requestWithContents, tag } from './helpers/grpc-wire.js';

/**
 * The server's JavaScript heap. Decoded into a JavaScript array (as before), COUNT bools
 * take 8 bytes each, twice over this; read into a typed array, they stay outside the heap.
 */
const HEAP_MIB = 160;
const COUNT = 40_000_000;

const child = useGrpcServerChild(HEAP_MIB);

/** A request for the BOOL identity model with COUNT packed bools, all true but the last. */
function boolsRequest(shape: number[]): Buffer {
  const bools = Buffer.alloc(COUNT, 1);
  bools[COUNT - 1] = 0;
  return requestWithContents('bools', { name: 'IN', datatype: 'BOOL', shape }, lengthDelimited(1, [bools]));
}

async function expectAlive(): Promise<void> {
  // An empty ServerLiveRequest, answered by ServerLiveResponse { live: true }.
  expect(await child.current.client.call('ServerLive', Buffer.alloc(0)), `the server process died:\n${child.current.output()}`).toEqual(Buffer.from([8, 1]));
}

describe(`a gRPC server with a ${HEAP_MIB} MiB heap`, () => {
  it(`refuses ${COUNT / 1e6} M packed bool_contents for a shape of 4 before decoding them, and lives`, async () => {
    await expectStatus(child.current.client.call('ModelInfer', boolsRequest([4])), status.INVALID_ARGUMENT, `^input 'IN': expected 4 elements for shape \\[4\\], got ${COUNT} in bool_contents$`);
    await expectAlive();
  });

  it(`refuses ${COUNT / 2e6} M empty outputs before decoding them, and lives`, async () => {
    const emptyOutputs = Buffer.alloc(COUNT);
    for (let i = 0; i < COUNT; i += 2) emptyOutputs[i] = (6 << 3) | 2; // outputs {}, a tag and a length of 0
    await expectStatus(child.current.client.call('ModelInfer', emptyOutputs), status.INVALID_ARGUMENT, /more than 100000 inputs, outputs/);
    await expectAlive();
  });

  it("refuses Triton's 10,485,760 one-byte bytes_contents from the shape, past this heap's BYTES budget, and lives", async () => {
    const count = 10_485_760;
    const element = Buffer.concat([tag(8, 2), Buffer.from([1]), Buffer.from('A')]);
    const request = requestWithContents('strings', { name: 'IN', datatype: 'BYTES', shape: [count] }, [Buffer.alloc(count * element.length, element)]);
    await expectStatus(child.current.client.call('ModelInfer', request), status.INVALID_ARGUMENT, /^input 'IN': BYTES of shape \[10485760\] brings the request to 10485760 BYTES elements, more than the \d+ a request may carry \(.* a third of the heap limit\)$/);
    await expectAlive();
  });

  it(`infers from ${COUNT / 1e6} M packed bool_contents, and lives`, async () => {
    const response = inferResponseType.decode(await child.current.client.call('ModelInfer', boolsRequest([COUNT]))) as unknown as { raw_output_contents: Uint8Array[] };
    const out = response.raw_output_contents[0]!;
    expect([out.length, out[0], out[COUNT - 2], out[COUNT - 1]]).toEqual([COUNT, 1, 1, 0]);
    await expectAlive();
  });
});
