import { fileURLToPath } from 'node:url';
import { connect, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import { status, type ClientDuplexStream, type MethodDefinition, type ServiceDefinition, type StatusObject } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { describe, expect, it, vi } from 'vitest';
import type { RunningInference } from '@tritium/core';
import { testConfig } from '../../core/test/helpers/repository.js';
import { STREAM_REQUESTS_IN_FLIGHT } from '../src/grpc/stream-infer.js';
import { raw, useGrpcFixture, type Message } from './helpers/grpc-fixture.js';
import { ACCUMULATE, REPEAT, SIMPLE } from './helpers/grpc-models.js';

const fx = useGrpcFixture();
const PROTOS = fileURLToPath(new URL('../proto/', import.meta.url));

const repeat = (id: string, parameters: object) => ({
  model_name: 'repeat',
  id,
  inputs: [{ name: 'IN', datatype: 'INT32', shape: [1] }],
  raw_input_contents: [raw(Int32Array.from([7]))],
  parameters,
});
const simple = (id: string, value: number, parameters: object = {}) => ({
  model_name: 'simple',
  id,
  inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4] }],
  raw_input_contents: [raw(Float32Array.from([value, value, value, value]))],
  parameters,
});

/** Reads a stream's messages one at a time, and its final status. */
function reader(stream: ClientDuplexStream<Message, Message>) {
  const messages = stream[Symbol.asyncIterator]();
  const final = new Promise<StatusObject>((resolve) => stream.on('status', resolve));
  return {
    async take(count: number): Promise<Message[]> {
      const taken = [];
      for (let i = 0; i < count; i++) {
        const next = await messages.next();
        if (next.done) throw new Error(`the stream ended after ${taken.length} of ${count} messages`);
        taken.push(next.value);
      }
      return taken;
    },
    /** Half-closes the stream and checks that nothing more comes before it ends with `code`. */
    async end(code = status.OK): Promise<void> {
      stream.end();
      expect((await messages.next()).done).toBe(true);
      expect((await final).code).toBe(code);
    },
  };
}

/** The stream rpc's own message coders, for a client of plain HTTP/2. */
const STREAM = (loadSync('grpc_service.proto', { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true, includeDirs: [PROTOS] })['inference.GRPCInferenceService'] as ServiceDefinition)
  .ModelStreamInfer! as MethodDefinition<Message, Message>;

/** gRPC's framing of one message: uncompressed, its length (4 bytes big-endian), then the message. */
function grpcFrame(message: Buffer): Buffer {
  const header = Buffer.alloc(5);
  header.writeUInt32BE(message.length, 1);
  return Buffer.concat([header, message]);
}

/** The messages that come on `stream`, each as it is completed (the array fills as data arrives). */
function readFrames(stream: ClientHttp2Stream): Buffer[] {
  const frames: Buffer[] = [];
  let pending = Buffer.alloc(0);
  stream.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 5 && pending.length >= 5 + pending.readUInt32BE(1)) {
      const end = 5 + pending.readUInt32BE(1);
      frames.push(pending.subarray(5, end));
      pending = pending.subarray(end);
    }
  });
  return frames;
}

const final = (message: Message) => message.infer_response.parameters.triton_final_response?.bool_param;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('ModelStreamInfer', () => {
  it('answers many requests on one stream, ordinary models in request order, each marked final', async () => {
    const client = await fx.start({ simple: SIMPLE });
    const stream = client.stream();
    const read = reader(stream);
    stream.write(simple('slow', 1, { delay_ms: { int64_param: 200 } }));
    stream.write(simple('fast', 2));
    stream.write(simple('third', 3));
    const answers = await read.take(3);
    expect(answers.map((a) => [a.error_message, a.infer_response.id, final(a)])).toEqual([
      ['', 'slow', true],
      ['', 'fast', true],
      ['', 'third', true],
    ]);
    expect(answers[1].infer_response).toMatchObject({ model_name: 'simple', model_version: '1' });
    expect(Array.from(new Float32Array(Uint8Array.from(answers[2].infer_response.raw_output_contents[0]).buffer))).toEqual([3, 3, 3, 3]);
    await read.end();
  });

  it("streams a decoupled model's responses, with Triton's empty final response only when asked for", async () => {
    const client = await fx.start({ repeat: REPEAT });
    const stream = client.stream();
    const read = reader(stream);
    stream.write(repeat('plain', { count: { int64_param: 3 } }));
    const plain = await read.take(3);
    expect(plain.map((m) => [m.infer_response.id, final(m), m.infer_response.outputs.length])).toEqual([
      ['plain', false, 1],
      ['plain', false, 1],
      ['plain', false, 1],
    ]);
    stream.write(repeat('empty-final', { count: { int64_param: 2 }, triton_enable_empty_final_response: { bool_param: true } }));
    const withEnd = await read.take(3);
    expect(withEnd.map((m) => [final(m), m.infer_response.outputs.length])).toEqual([
      [false, 1],
      [false, 1],
      [true, 0],
    ]);
    expect(withEnd[2].infer_response).toMatchObject({ id: 'empty-final', model_name: 'repeat', raw_output_contents: [] });
    stream.write(repeat('nothing', { count: { int64_param: 0 }, triton_enable_empty_final_response: { bool_param: true } }));
    expect((await read.take(1)).map((m) => [m.infer_response.id, final(m), m.infer_response.outputs.length])).toEqual([['nothing', true, 0]]);
    await read.end();
  });

  it('marks the response a decoupled model sends with the final flag, and adds no empty one then', async () => {
    const client = await fx.start({ repeat: REPEAT });
    const stream = client.stream();
    const read = reader(stream);
    stream.write(repeat('r', { count: { int64_param: 2 }, final_with_last: { bool_param: true }, triton_enable_empty_final_response: { bool_param: true } }));
    expect((await read.take(2)).map(final)).toEqual([false, true]);
    await read.end();
  });

  it("does not hold a decoupled model's responses behind an ordinary model's slower answer", async () => {
    const client = await fx.start({ simple: SIMPLE, repeat: REPEAT });
    const stream = client.stream();
    const read = reader(stream);
    stream.write(simple('slow', 1, { delay_ms: { int64_param: 300 } }));
    stream.write(repeat('quick', { count: { int64_param: 1 } }));
    expect((await read.take(2)).map((m) => m.infer_response.id)).toEqual(['quick', 'slow']);
    await read.end();
  });

  it('answers a failing request inside the stream, and the stream stays open for the next', async () => {
    const client = await fx.start({ simple: SIMPLE, repeat: REPEAT });
    const stream = client.stream();
    const read = reader(stream);
    stream.write({ ...simple('unknown', 1), model_name: 'nope' });
    stream.write({ ...simple('bad-type', 1), inputs: [{ name: 'INPUT0', datatype: 'FP8', shape: [4] }] });
    stream.write(simple('fails', 1, { fail: { string_param: 'on purpose' } }));
    stream.write(repeat('bad-flag', { triton_enable_empty_final_response: { int64_param: 1 } }));
    stream.write(simple('good', 5));
    const answers = await read.take(5);
    expect(answers.map((a) => [a.infer_response.id, a.error_message])).toEqual([
      ['unknown', expect.stringMatching(/'nope'/)],
      ['bad-type', expect.stringMatching(/unknown datatype 'FP8'/)],
      ['fails', expect.stringMatching(/asked to fail: on purpose/)],
      ['bad-flag', expect.stringMatching(/'triton_enable_empty_final_response' takes bool_param, not int64_param/)],
      ['good', ''],
    ]);
    expect(answers[0].infer_response).toMatchObject({ model_name: 'nope', outputs: [] });
    stream.write(repeat('after', { count: { int64_param: 1 } }));
    expect((await read.take(1))[0].error_message).toBe('');
    await read.end();
  });

  it("carries each request's own id, empty when it gave none, alike on answers, streamed responses and errors", async () => {
    const client = await fx.start({ simple: SIMPLE, repeat: REPEAT });
    const stream = client.stream();
    const read = reader(stream);
    const anonymous = <T extends { id?: string }>({ id: _id, ...request }: T) => request;
    stream.write(anonymous(simple('', 1)));
    stream.write({ ...anonymous(simple('', 1)), model_name: 'nope' });
    stream.write(anonymous(repeat('', { count: { int64_param: 2 }, triton_enable_empty_final_response: { bool_param: true } })));
    // The decoupled model's responses may come before or between the others.
    const answers = await read.take(5);
    expect(answers.map((a) => [a.infer_response.model_name, a.infer_response.id, a.error_message === '']).sort()).toEqual([
      ['nope', '', false],
      ['repeat', '', true],
      ['repeat', '', true],
      ['repeat', '', true],
      ['simple', '', true],
    ]);
    stream.write(simple('named', 2));
    expect((await read.take(1))[0].infer_response.id).toBe('named');
    await read.end();
  });

  it('keeps a sequence over the stream', async () => {
    const client = await fx.start({ acc: ACCUMULATE });
    const stream = client.stream();
    const read = reader(stream);
    const step = (value: number, parameters: object) =>
      stream.write({ model_name: 'acc', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1] }], raw_input_contents: [raw(Float32Array.from([value]))], parameters });
    step(1, { sequence_id: { int64_param: 9 }, sequence_start: { bool_param: true } });
    step(2, { sequence_id: { int64_param: 9 } });
    step(3, { sequence_id: { int64_param: 9 }, sequence_end: { bool_param: true } });
    const sums = (await read.take(3)).map((m) => new Float32Array(Uint8Array.from(m.infer_response.raw_output_contents[0]).buffer)[0]);
    expect(sums).toEqual([1, 3, 6]);
    await read.end();
  });

  it('cancels the requests in flight when the client cancels the stream', async () => {
    const client = await fx.start({ simple: SIMPLE, repeat: REPEAT });
    const stream = client.stream();
    const read = reader(stream);
    stream.on('error', () => {});
    stream.write(repeat('long', { count: { int64_param: 1000 }, interval_ms: { int64_param: 20 } }));
    stream.write(simple('slow', 1, { delay_ms: { int64_param: 1_000 } }));
    await read.take(1);
    stream.cancel();
    const failures = (model: string) => fx.server!.statistics(model).model_stats[0]!.inference_stats.fail.count;
    // Uncancelled, the decoupled request would run for 20 s and the ordinary one succeed after 1 s.
    await expect.poll(() => [failures('repeat'), failures('simple')]).toEqual([1, 1]);
  });
});

describe('ModelStreamInfer flow control', () => {
  /** Identity on FP32 [-1]: a response as large as its request. */
  const LARGE = { config: testConfig({ dims: [-1] }) };
  const large = (id: string) => ({ model_name: 'large', id, inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [16_384] }], raw_input_contents: [Buffer.alloc(65_536, 1)] });

  it('stops reading while the client does not take its answers, and answers everything once it does', async () => {
    await fx.start({ large: LARGE });
    // A client of plain HTTP/2, whose unread answers fill its flow-control window
    // (@grpc/grpc-js's client would take them into its memory instead).
    const session = connect(`http://127.0.0.1:${fx.frontend!.port}`);
    const call = session.request({ ':method': 'POST', ':path': '/inference.GRPCInferenceService/ModelStreamInfer', 'content-type': 'application/grpc', te: 'trailers' });
    call.pause();
    const sent = 200;
    try {
      let written = 0;
      const send = () => {
        while (written < sent) if (!call.write(grpcFrame(STREAM.requestSerialize(large(`r${written++}`))))) return void call.once('drain', send);
        call.end();
      };
      send();
      await sleep(500);
      const executed = fx.probe.executions;
      await sleep(500);
      expect(fx.probe.executions).toBe(executed);
      expect(executed).toBeLessThan(sent / 2);
      const frames = readFrames(call);
      const trailers = new Promise<IncomingHttpHeaders>((resolve) => call.on('trailers', resolve));
      call.resume();
      await new Promise((resolve) => call.on('end', resolve));
      expect((await trailers)['grpc-status']).toBe('0');
      const answers = frames.map((frame) => STREAM.responseDeserialize(frame));
      expect(answers.map((m) => [m.infer_response.id, m.error_message])).toEqual(Array.from({ length: sent }, (_, i) => [`r${i}`, '']));
    } finally {
      session.destroy();
    }
  });

  it(`holds at most ${STREAM_REQUESTS_IN_FLIGHT} requests of one stream in flight, and answers the rest as those finish`, async () => {
    const BATCHING = { config: testConfig({ maxBatchSize: 128, extra: 'dynamic_batching { }' }) };
    const client = await fx.start({ batching: BATCHING });
    const server = fx.server!;
    let inFlight = 0;
    let most = 0;
    const startInference = server.startInference.bind(server);
    vi.spyOn(server, 'startInference').mockImplementation((model, request): RunningInference => {
      const running = startInference(model, request);
      most = Math.max(most, ++inFlight);
      void running.response.finally(() => inFlight--).catch(() => {});
      return running;
    });
    const stream = client.stream();
    const read = reader(stream);
    const sent = STREAM_REQUESTS_IN_FLIGHT + 36;
    for (let i = 0; i < sent; i++) {
      stream.write({ ...simple(`r${i}`, i), model_name: 'batching', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 4] }], parameters: { delay_ms: { int64_param: 300 } } });
    }
    expect((await read.take(sent)).map((m) => m.infer_response.id)).toEqual(Array.from({ length: sent }, (_, i) => `r${i}`));
    expect(most).toBe(STREAM_REQUESTS_IN_FLIGHT);
    await read.end();
  });
});
