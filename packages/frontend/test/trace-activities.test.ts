import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Metadata, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REQUEST_CHANNELS, type RequestStageMessage, type RequestView } from '@tritium/core';
import { raw, useGrpcFixture, type Message } from './helpers/grpc-fixture.js';
import { SIMPLE } from './helpers/grpc-models.js';
import { startHttpFixture, type HttpFixture } from './helpers/http-fixture.js';
import { simpleModel } from './helpers/http-models.js';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
type Entry = { id: number; model_name?: string; request_id?: string; timestamps?: { name: string; ns: number }[] };

let dir: string;
let heard: RequestView[];
const listener = (message: unknown) => heard.push((message as RequestStageMessage).request);
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tritium-trace-activities-'));
  heard = [];
  subscribe(REQUEST_CHANNELS.start, listener);
});
afterEach(() => {
  unsubscribe(REQUEST_CHANNELS.start, listener);
  rmSync(dir, { recursive: true, force: true });
});

const traced = (file: string) => ({ trace: { trace_level: ['TIMESTAMPS'] as const, trace_rate: 1, trace_file: file } });
const read = (file: string): Entry[] => JSON.parse(readFileSync(file, 'utf8')) as Entry[];
/** Trace `id`'s entries in the file's order: the entry naming the trace as 'MODEL', a timestamp by its name. */
const written = (entries: Entry[], id: number) => entries.filter((e) => e.id === id).map((e) => (e.model_name ? 'MODEL' : e.timestamps![0]!.name));
/** The trace of the request with id `requestId`. */
const traceOf = (entries: Entry[], requestId: string) => written(entries, entries.find((e) => e.request_id === requestId)!.id);
const CORE = ['MODEL', 'REQUEST_START', 'QUEUE_START', 'COMPUTE_START', 'COMPUTE_END', 'REQUEST_END'];

describe('HTTP: the frontend activities and the W3C trace context', () => {
  let fx: HttpFixture | undefined;
  afterEach(async () => {
    await fx?.stop();
    fx = undefined;
  });
  const infer = (body: object, init: RequestInit = {}) =>
    fetch(`${fx!.url}/v2/models/simple/infer`, { method: 'POST', body: JSON.stringify(body), ...init, headers: { 'content-type': 'application/json', ...init.headers } });
  const inputs = [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }];

  it("passes the request's traceparent and tracestate headers to the server's request, and ignores a malformed one", async () => {
    fx = await startHttpFixture({ simple: simpleModel });
    expect((await infer({ inputs }, { headers: { traceparent: TRACEPARENT, tracestate: 'congo=t61rcWkgMzE' } })).status).toBe(200);
    expect((await infer({ inputs }, { headers: { traceparent: 'garbage' } })).status).toBe(200);
    expect(heard.map((view) => [view.trace?.traceparent, view.trace?.tracestate])).toEqual([
      [TRACEPARENT, 'congo=t61rcWkgMzE'],
      [undefined, undefined],
    ]);
  });

  it('writes the error response between HTTP_SEND_START and HTTP_SEND_END too', async () => {
    const file = join(dir, 'refused.json');
    fx = await startHttpFixture({ simple: simpleModel }, { server: traced(file) });
    expect((await infer({ id: 'bad', inputs: [{ ...inputs[0], shape: [5], data: [1, 2, 3, 4, 5] }] })).status).toBe(400);
    await fx.stop();
    fx = undefined;
    expect(traceOf(read(file), 'bad')).toEqual(['HTTP_RECV_START', 'HTTP_RECV_END', 'MODEL', 'REQUEST_START', 'REQUEST_END', 'HTTP_SEND_START', 'HTTP_SEND_END']);
  });

  it("writes the trace of a request whose client went away before its response, without send activities", async () => {
    const file = join(dir, 'gone.json');
    // One trace to take: it goes to gone.json.0 as soon as it is collected, with the server still running.
    fx = await startHttpFixture({ simple: simpleModel }, { server: { trace: { ...traced(file).trace, trace_count: 1 } } });
    const abort = new AbortController();
    const answer = infer({ id: 'gone', inputs, parameters: { delay_ms: 300 } }, { signal: abort.signal }).catch((error: unknown) => error);
    // Gone once the server has the request (and its 300 ms run has begun).
    while (heard.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 20));
    const ended = new Promise<void>((resolve) => {
      const onEnd = () => {
        unsubscribe(REQUEST_CHANNELS.end, onEnd);
        resolve();
      };
      subscribe(REQUEST_CHANNELS.end, onEnd);
    });
    abort.abort();
    expect(await answer).toBeInstanceOf(Error);
    // The server notices the client has gone and cancels the request; its trace is written without waiting for a response.
    await ended;
    const deadline = Date.now() + 5000;
    while (!existsSync(`${file}.0`) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    // Cancelled while it ran: the request ended before its execution did, and nothing was sent.
    expect(traceOf(read(`${file}.0`), 'gone')).toEqual(['HTTP_RECV_START', 'HTTP_RECV_END', 'MODEL', 'REQUEST_START', 'QUEUE_START', 'COMPUTE_START', 'REQUEST_END']);
  });

  it('writes each response of /generate_stream between send activities of its own', async () => {
    const file = join(dir, 'stream.json');
    const repeat = {
      config: `backend: "test"
input { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] }
output { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] }
model_transaction_policy { decoupled: true }
parameters { key: "behavior" value { string_value: "repeat" } }`,
    };
    fx = await startHttpFixture({ repeat }, { server: traced(file) });
    const response = await fetch(`${fx.url}/v2/models/repeat/generate_stream`, { method: 'POST', body: JSON.stringify({ id: 's', IN: 7, count: 2 }) });
    expect((await response.text()).match(/data:/g)).toHaveLength(2);
    await fx.stop();
    fx = undefined;
    const trace = traceOf(read(file), 's');
    expect(trace.slice(0, 3)).toEqual(['HTTP_RECV_START', 'HTTP_RECV_END', 'MODEL']);
    expect(trace.filter((name) => name.startsWith('HTTP_SEND') || name === 'INFER_RESPONSE_COMPLETE')).toEqual([
      'INFER_RESPONSE_COMPLETE',
      'HTTP_SEND_START',
      'HTTP_SEND_END',
      'INFER_RESPONSE_COMPLETE',
      'HTTP_SEND_START',
      'HTTP_SEND_END',
    ]);
  });
});

describe('gRPC: the frontend activities and the W3C trace context', () => {
  const fx = useGrpcFixture();
  const request = (id: string) => ({
    model_name: 'simple',
    id,
    inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4] }],
    raw_input_contents: [raw(Float32Array.from([1, 2, 3, 4]))],
  });
  const withContext = () => {
    const metadata = new Metadata();
    metadata.set('traceparent', TRACEPARENT);
    metadata.set('tracestate', 'vendor=1');
    return metadata;
  };

  it("ModelInfer: the call's traceparent metadata reaches the server's request; the trace has GRPC_WAITREAD_* before and GRPC_SEND_* after", async () => {
    const file = join(dir, 'grpc.json');
    const client = await fx.start({ simple: SIMPLE }, traced(file));
    await new Promise<Message>((resolve, reject) =>
      client.inference.ModelInfer!(request('g1'), withContext(), (error: ServiceError | null, response: Message) => (error ? reject(error) : resolve(response))),
    );
    expect(heard.map((view) => [view.trace?.traceparent, view.trace?.tracestate])).toEqual([[TRACEPARENT, 'vendor=1']]);
    await fx.frontend!.close();
    await fx.server!.stop();
    expect(traceOf(read(file), 'g1')).toEqual(['GRPC_WAITREAD_START', 'GRPC_WAITREAD_END', ...CORE, 'INFER_RESPONSE_COMPLETE', 'GRPC_SEND_START', 'GRPC_SEND_END']);
    const ns = read(file).filter((e) => e.timestamps).map((e) => e.timestamps![0]!.ns);
    expect(ns).toEqual([...ns].sort((a, b) => a - b));
  });

  it('ModelStreamInfer: each request on the stream has its own trace, with the stream\'s trace context', async () => {
    const file = join(dir, 'stream.json');
    const client = await fx.start({ simple: SIMPLE }, traced(file));
    const open = client.inference.ModelStreamInfer as unknown as (this: unknown, metadata: Metadata) => ClientDuplexStream<Message, Message>;
    const stream = open.call(client.inference, withContext());
    const answers: Message[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      stream.on('data', (message: Message) => answers.push(message));
      stream.on('end', resolve);
      stream.on('error', reject);
    });
    stream.write(request('s1'));
    stream.write(request('s2'));
    stream.end();
    await ended;
    expect(answers).toHaveLength(2);
    expect(heard.map((view) => view.trace?.traceparent)).toEqual([TRACEPARENT, TRACEPARENT]);
    await fx.frontend!.close();
    await fx.server!.stop();
    const entries = read(file);
    for (const id of ['s1', 's2']) {
      expect(traceOf(entries, id)).toEqual(['GRPC_WAITREAD_START', 'GRPC_WAITREAD_END', ...CORE, 'INFER_RESPONSE_COMPLETE', 'GRPC_SEND_START', 'GRPC_SEND_END']);
    }
  });
});
