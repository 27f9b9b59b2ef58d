import { status, type ServiceError } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { expectStatus, raw, useGrpcFixture } from './helpers/grpc-fixture.js';
import { SIMPLE } from './helpers/grpc-models.js';
import { grpcError, MAX_STATUS_MESSAGE_BYTES } from '../src/grpc/grpc-status.js';
import { MAX_REQUEST_ENTRIES } from '../src/grpc/request-entries.js';
import { encodeMessage, inferRequestType, inferResponseType, inputTensorType, lengthDelimited, padTo, RawGrpcClient, requestWithContents, streamResponseType } from './helpers/grpc-wire.js';

const fx = useGrpcFixture();
const MiB = 1024 * 1024;
const BOOLS = {
  config: `backend: "test"
input { name: "IN" data_type: TYPE_BOOL dims: [ -1 ] }
output { name: "OUT" data_type: TYPE_BOOL dims: [ -1 ] }`,
};
const fp32Request = { model_name: 'simple', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4] }], raw_input_contents: [raw(Float32Array.from([1, 2, 3, 4]))] };
const encodedFp32Request = encodeMessage(inferRequestType, fp32Request);

const clients: RawGrpcClient[] = [];
function rawClient(): RawGrpcClient {
  const client = new RawGrpcClient(fx.frontend!.port);
  clients.push(client);
  return client;
}

/** The first output of an encoded ModelInferResponse, as FP32 values. */
function fp32Output(response: Buffer): number[] {
  const message = inferResponseType.decode(response) as unknown as { raw_output_contents: Uint8Array[] };
  return Array.from(new Float32Array(Uint8Array.from(message.raw_output_contents[0]!).buffer));
}

async function expectServing(): Promise<void> {
  expect((await fx.client.call('ModelInfer', fp32Request)).raw_output_contents[0]).toEqual(raw(Float32Array.from([1, 2, 3, 4])));
}

describe('gRPC message size limits', () => {
  afterEach(() => clients.splice(0).forEach((client) => client.close()));

  it('takes a request of 64 MiB by default, refuses one byte more with RESOURCE_EXHAUSTED, and keeps serving', async () => {
    await fx.start({ simple: SIMPLE });
    const client = rawClient();
    await expectStatus(client.call('ModelInfer', padTo(encodedFp32Request, 64 * MiB + 1)), status.RESOURCE_EXHAUSTED, /^Received message larger than max \(67108865 vs 67108864\)$/);
    expect(fp32Output(await client.call('ModelInfer', padTo(encodedFp32Request, 64 * MiB)))).toEqual([1, 2, 3, 4]);
    await expectServing();
  });

  it('refuses a request over maxReceiveMessageBytes, and a stream message over it ends that stream only', async () => {
    await fx.start({ simple: SIMPLE }, {}, { maxReceiveMessageBytes: 1000 });
    const client = rawClient();
    expect(fp32Output(await client.call('ModelInfer', padTo(encodedFp32Request, 1000)))).toEqual([1, 2, 3, 4]);
    await expectStatus(client.call('ModelInfer', padTo(encodedFp32Request, 1001)), status.RESOURCE_EXHAUSTED, /larger than max \(1001 vs 1000\)/);

    const stream = client.stream();
    const ended = new Promise<ServiceError>((resolve) => stream.on('error', resolve));
    stream.on('data', () => {});
    stream.write(padTo(encodedFp32Request, 1001));
    expect((await ended).code).toBe(status.RESOURCE_EXHAUSTED);
    await expectServing();
  });

  it('answers within maxSendMessageBytes, and fails a response over it with RESOURCE_EXHAUSTED', async () => {
    await fx.start({ simple: SIMPLE }, {}, { maxSendMessageBytes: 20 });
    await expectStatus(fx.client.call('ModelInfer', fp32Request), status.RESOURCE_EXHAUSTED, /Sent message larger than max/);
    expect(await fx.client.call('ServerLive')).toEqual({ live: true });
  });
});

describe('typed contents on the wire', () => {
  const boolRequest = (shape: number[], bools: Buffer) => requestWithContents('bools', { name: 'IN', datatype: 'BOOL', shape }, lengthDelimited(1, [bools]));

  it('decodes a large packed bool_contents straight into a typed array', async () => {
    await fx.start({ bools: BOOLS });
    const count = 8_000_000;
    const bools = Buffer.alloc(count, 1);
    bools[1] = 0;
    bools[count - 1] = 0;
    const response = inferResponseType.decode(await rawClient().call('ModelInfer', boolRequest([count], bools))) as unknown as { raw_output_contents: Uint8Array[] };
    const received = fx.probe.batches[0]![0]!.inputs.IN!.data;
    expect(received).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(received as Uint8Array).equals(bools)).toBe(true);
    expect(Buffer.from(response.raw_output_contents[0]!).equals(bools)).toBe(true);
  });

  it('refuses contents whose element count disagrees with the shape, naming the input, and keeps serving', async () => {
    await fx.start({ bools: BOOLS, simple: SIMPLE });
    await expectStatus(rawClient().call('ModelInfer', boolRequest([4], Buffer.alloc(1_000_000, 1))), status.INVALID_ARGUMENT, /^input 'IN': expected 4 elements for shape \[4\], got 1000000 in bool_contents$/);
    expect(fx.probe.executions).toBe(0);
    await expectServing();
  });

  it('refuses malformed contents as INVALID_ARGUMENT, naming the input', async () => {
    await fx.start({ bools: BOOLS });
    const truncated = Buffer.from([1, 1, 0x80]);
    await expectStatus(rawClient().call('ModelInfer', boolRequest([2], truncated)), status.INVALID_ARGUMENT, /^input 'IN': contents are malformed: a packed run ends inside a varint$/);
  });
});

describe('the entries of a request', () => {
  const overfull = `the request holds more than ${MAX_REQUEST_ENTRIES} inputs, outputs, parameters, shape dimensions and raw_input_contents entries together, the most one request may hold`;
  /** A request for `bools` with one input whose packed shape has `dims` dimensions of 1, and one bool. */
  const manyDims = (dims: number) =>
    Buffer.concat([
      encodeMessage(inferRequestType, { model_name: 'bools', id: 'many' }),
      ...lengthDelimited(5, [encodeMessage(inputTensorType, { name: 'IN', datatype: 'BOOL' }), ...lengthDelimited(3, [Buffer.alloc(dims, 1)]), ...lengthDelimited(5, lengthDelimited(1, [Buffer.from([1])]))]),
    ]);

  it('refuses a request with more, counted before it is decoded, and keeps serving', async () => {
    await fx.start({ bools: BOOLS, simple: SIMPLE });
    const client = rawClient();
    // The input and its dimensions: one over.
    await expectStatus(client.call('ModelInfer', manyDims(MAX_REQUEST_ENTRIES)), status.INVALID_ARGUMENT, `^${overfull}$`);
    await expectStatus(client.call('ModelInfer', Buffer.concat(Array.from({ length: MAX_REQUEST_ENTRIES + 1 }, () => Buffer.from([0x32, 0])))), status.INVALID_ARGUMENT, `^${overfull}$`);
    // At the limit, the request is decoded and answered for what it asks: here the model's
    // refusal of its shape, a message cut short to fit a trailer.
    const refusal = await expectStatus(client.call('ModelInfer', manyDims(MAX_REQUEST_ENTRIES - 1)), status.INVALID_ARGUMENT, /^model 'bools' request 'many': input 'IN' has shape \[1,1,1,.*…$/);
    expect(Buffer.byteLength(refusal.details)).toBe(MAX_STATUS_MESSAGE_BYTES);
    expect(fx.probe.executions).toBe(0);
    await expectServing();
  });

  it('answers a stream request with more by an error naming its id, and the stream goes on', async () => {
    await fx.start({ bools: BOOLS, simple: SIMPLE });
    const stream = rawClient().stream();
    const answers: { error_message: string; infer_response: { id: string } }[] = [];
    stream.on('data', (bytes: Buffer) => answers.push(streamResponseType.toObject(streamResponseType.decode(bytes), { defaults: true }) as never));
    const ended = new Promise((resolve) => stream.on('end', resolve));
    stream.write(manyDims(MAX_REQUEST_ENTRIES));
    stream.write(encodedFp32Request);
    stream.end();
    await ended;
    expect(answers.map((a) => [a.error_message, a.infer_response.id])).toEqual([
      [overfull, 'many'],
      ['', ''],
    ]);
  });
});

describe('status messages', () => {
  it('cuts a long one at a whole character, within MAX_STATUS_MESSAGE_BYTES of UTF-8', () => {
    // An odd prefix puts the byte limit in the middle of a 4-byte character.
    for (const prefix of ['', 'a', 'ab', 'abc']) {
      const { details } = grpcError(new Error(prefix + '😀'.repeat(1000)));
      expect(Buffer.byteLength(details!)).toBeLessThanOrEqual(MAX_STATUS_MESSAGE_BYTES);
      expect(details!.startsWith(prefix)).toBe(true);
      expect(details!.slice(prefix.length)).toMatch(/^(😀)+…$/u);
      expect(() => encodeURI(details!)).not.toThrow();
    }
  });

  it('sends a lone surrogate as U+FFFD (grpc-js percent-encodes the message, and encodeURI throws on one)', () => {
    expect(grpcError(new Error('input \ud800 bad')).details).toBe('input \ufffd bad');
  });

  it('answers a request whose error echoes a long name of emoji, and keeps serving', async () => {
    // The message was cut inside a surrogate pair, grpc-js threw sending it, and the
    // rejection went unhandled: a server process would have died, the client waited for ever.
    await fx.start({ simple: SIMPLE });
    const name = 'a' + '😀'.repeat(1500);
    const request = { model_name: 'simple', inputs: [{ name, datatype: 'NOPE', shape: [1] }] };
    await expectStatus(fx.client.call('ModelInfer', request), status.INVALID_ARGUMENT, /^input 'a(😀)+…$/u);
    await expectServing();
  });
});

describe('a request that is not a ModelInferRequest', () => {
  const MALFORMED: [string, number[], RegExp][] = [
    ["model_name's length past the end", [(1 << 3) | 2, 10, 0x61], /^the request's fields are malformed: a length runs past the end$/],
    ['a tag of 11 bytes', [...Array<number>(10).fill(0x80), 0], /^the request's fields are malformed: a varint runs past 10 bytes$/],
    ['wire type 7', [(1 << 3) | 7], /^the request's fields are malformed: wire type 7 is not expected here$/],
    // Inside an input's parameter, where only protobufjs's decoder reads.
    ["a parameter key's length past the end", [(5 << 3) | 2, 4, (4 << 3) | 2, 2, (1 << 3) | 2, 9], /^the request is not a valid ModelInferRequest: /],
  ];

  it.each(MALFORMED)('(%s) is refused with INVALID_ARGUMENT, and the server serves on', async (_case, bytes, why) => {
    await fx.start({ simple: SIMPLE });
    await expectStatus(rawClient().call('ModelInfer', Buffer.from(bytes)), status.INVALID_ARGUMENT, why);
    await expectServing();
  });

  it('inside a stream is answered by an error message, and the stream goes on', async () => {
    await fx.start({ simple: SIMPLE });
    const stream = rawClient().stream();
    const answers: { error_message: string }[] = [];
    stream.on('data', (bytes: Buffer) => answers.push(streamResponseType.toObject(streamResponseType.decode(bytes), { defaults: true }) as never));
    const ended = new Promise((resolve) => stream.on('end', resolve));
    stream.write(Buffer.from(MALFORMED[0]![1]));
    stream.write(encodedFp32Request);
    stream.end();
    await ended;
    expect(answers.map((a) => a.error_message)).toEqual(["the request's fields are malformed: a length runs past the end", '']);
  });
});
