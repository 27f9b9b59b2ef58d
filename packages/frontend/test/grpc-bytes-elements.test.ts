import { describe, expect, it } from 'vitest';
import { useGrpcServerChild } from './helpers/grpc-server-child.js';
import { inferResponseType, requestWithContents, tag } from './helpers/grpc-wire.js';

/** Node's default heap limit on a host of 16 GiB or more, set so the test does not depend on the host. */
const HEAP_MIB = 4096;
/** Triton's L0_grpc python_unit_test.py test_bytes_contents_many_elements_serialization. */
const COUNT = 10_485_760;

const child = useGrpcServerChild(HEAP_MIB);

describe(`a gRPC server with a ${HEAP_MIB} MiB heap`, () => {
  it(`takes Triton's ${COUNT} one-byte bytes_contents and answers them all, within the BYTES budget`, async () => {
    // Each element: bytes_contents' tag, a length of 1, and b"A".
    const element = Buffer.concat([tag(8, 2), Buffer.from([1]), Buffer.from('A')]);
    const request = requestWithContents('strings', { name: 'IN', datatype: 'BYTES', shape: [COUNT] }, [Buffer.alloc(COUNT * element.length, element)]);
    const response = inferResponseType.decode(await child.current.client.call('ModelInfer', request)) as unknown as { outputs: Array<{ shape: unknown[] }>; raw_output_contents: Uint8Array[] };
    expect(response.outputs[0]!.shape.map(Number)).toEqual([COUNT]);
    // Raw BYTES: each element as a 4-byte little-endian length and its byte.
    const out = Buffer.from(response.raw_output_contents[0]!);
    expect(out.length).toBe(COUNT * 5);
    expect(out.equals(Buffer.alloc(COUNT * 5, Buffer.from([1, 0, 0, 0, 65])))).toBe(true);
  }, 120_000);
});
