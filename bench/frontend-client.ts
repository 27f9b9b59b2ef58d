/**
 * The client side of bench/frontend.ts, run as a child process so that clients and
 * server each have a core. The parent sends `{ target, calls, concurrency }` and gets
 * back `{ requestsPerSecond, p50, p99 }` (µs); every answer is checked once per run.
 * Targets are set up from the ports and paths the parent passes in argv (JSON).
 */
import { openSync, readSync, writeSync } from 'node:fs';
import http from 'node:http';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { measureLatency } from './measure.js';

export interface ClientSetup {
  httpEcho: number;
  http: number;
  grpcEcho: number;
  grpc: number;
  /** The frontend's grpc_service.proto. */
  proto: string;
  /** The model to call: `tiny` (x + 1, one float per request) or `identity` (any number of floats). */
  model: 'tiny' | 'identity';
  /** Floats in the tensor each request sends. */
  elements: number;
  /** The /dev/shm file the shared-memory targets make (the parent removes it). */
  sharedMemoryKey: string;
}

export type Target = 'http-echo' | 'http-json' | 'http-binary' | 'grpc-echo' | 'grpc' | 'http-shm' | 'grpc-shm';

const setup = JSON.parse(process.argv[2]!) as ClientSetup;
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const floats = Float32Array.from({ length: setup.elements }, (_, i) => i % 7);
const tensorBytes = Buffer.from(floats.buffer);

const json = Buffer.from(JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, setup.elements], datatype: 'FP32', data: Array.from(floats) }] }));
const binaryHeader = Buffer.from(
  JSON.stringify({
    inputs: [{ name: 'INPUT0', shape: [1, setup.elements], datatype: 'FP32', parameters: { binary_data_size: tensorBytes.length } }],
    outputs: [{ name: 'OUTPUT0', parameters: { binary_data: true } }],
  }),
);
const binary = Buffer.concat([binaryHeader, tensorBytes]);

function post(port: number, path: string, body: Buffer, headers: http.OutgoingHttpHeaders): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const request = http.request({ port, host: '127.0.0.1', path, method: 'POST', agent, headers: { 'content-length': body.length, ...headers } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => (response.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`HTTP ${response.statusCode}: ${Buffer.concat(chunks)}`))));
    });
    request.on('error', reject);
    request.end(body);
  });
}

const echoMethod = { path: '/bench.Echo/Echo', requestStream: false, responseStream: false, requestSerialize: (b: Buffer) => b, requestDeserialize: (b: Buffer) => b, responseSerialize: (b: Buffer) => b, responseDeserialize: (b: Buffer) => b };
const EchoClient = grpc.makeGenericClientConstructor({ Echo: echoMethod }, 'Echo');
const echoClient = new EchoClient(`127.0.0.1:${setup.grpcEcho}`, grpc.credentials.createInsecure()) as unknown as { Echo(b: Buffer, cb: (e: Error | null, r?: Buffer) => void): void };
const definition = protoLoader.loadSync(setup.proto, { keepCase: true, longs: String, enums: String, defaults: false });
const { inference } = grpc.loadPackageDefinition(definition) as unknown as { inference: { GRPCInferenceService: grpc.ServiceClientConstructor } };
const maxMessage = { 'grpc.max_send_message_length': -1, 'grpc.max_receive_message_length': -1 };
const inferClient = new inference.GRPCInferenceService(`127.0.0.1:${setup.grpc}`, grpc.credentials.createInsecure(), maxMessage) as unknown as {
  ModelInfer(r: object, cb: (e: Error | null, r?: { raw_output_contents: Buffer[] }) => void): void;
};
const inferRequest = { model_name: setup.model, inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, setup.elements] }], raw_input_contents: [tensorBytes] };

/**
 * Shared memory as a client on the same host uses it: one region for the input and one
 * for the output in a /dev/shm file, registered once; each call writes the input into it
 * and reads the output back (a mapped client would memcpy instead).
 */
let sharedMemory: number | undefined;
async function sharedMemoryFile(): Promise<number> {
  if (sharedMemory !== undefined) return sharedMemory;
  const fd = openSync(`/dev/shm${setup.sharedMemoryKey}`, 'w+');
  writeSync(fd, new Uint8Array(1), 0, 1, 2 * tensorBytes.length - 1);
  for (const [region, offset] of [['bench_in', 0], ['bench_out', tensorBytes.length]] as const) {
    const body = Buffer.from(JSON.stringify({ key: setup.sharedMemoryKey, offset, byte_size: tensorBytes.length }));
    await post(setup.http, `/v2/systemsharedmemory/region/${region}/register`, body, { 'content-type': 'application/json' });
  }
  return (sharedMemory = fd);
}
const inShm = { shared_memory_region: 'bench_in', shared_memory_byte_size: tensorBytes.length };
const outShm = { shared_memory_region: 'bench_out', shared_memory_byte_size: tensorBytes.length };
const shmJson = Buffer.from(JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, setup.elements], datatype: 'FP32', parameters: inShm }], outputs: [{ name: 'OUTPUT0', parameters: outShm }] }));
const grpcParameters = (p: { shared_memory_region: string; shared_memory_byte_size: number }) => ({
  shared_memory_region: { string_param: p.shared_memory_region },
  shared_memory_byte_size: { int64_param: p.shared_memory_byte_size },
});
const shmInferRequest = {
  model_name: setup.model,
  inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, setup.elements], parameters: grpcParameters(inShm) }],
  outputs: [{ name: 'OUTPUT0', parameters: grpcParameters(outShm) }],
};
async function throughSharedMemory(infer: () => Promise<unknown>): Promise<Uint8Array> {
  const fd = await sharedMemoryFile();
  writeSync(fd, tensorBytes, 0, tensorBytes.length, 0);
  await infer();
  const output = new Uint8Array(tensorBytes.length);
  readSync(fd, output, 0, output.length, tensorBytes.length);
  return output;
}

const unary = <T>(call: (cb: (e: Error | null, r?: T) => void) => void) => new Promise<T>((resolve, reject) => call((e, r) => (e ? reject(e) : resolve(r!))));

/** One call of each target, resolving with the bytes of the returned tensor (or the echo). */
const calls: Record<Target, () => Promise<Uint8Array | number[]>> = {
  'http-echo': () => post(setup.httpEcho, '/', binary, { 'content-type': 'application/octet-stream' }),
  'http-json': async () => (JSON.parse((await post(setup.http, `/v2/models/${setup.model}/infer`, json, { 'content-type': 'application/json' })).toString()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data,
  'http-binary': async () => {
    const body = await post(setup.http, `/v2/models/${setup.model}/infer`, binary, { 'inference-header-content-length': binaryHeader.length });
    return body.subarray(body.length - tensorBytes.length);
  },
  'grpc-echo': () => unary<Buffer>((cb) => echoClient.Echo(binary, cb)),
  grpc: async () => (await unary<{ raw_output_contents: Buffer[] }>((cb) => inferClient.ModelInfer(inferRequest, cb))).raw_output_contents[0]!,
  'http-shm': () => throughSharedMemory(() => post(setup.http, `/v2/models/${setup.model}/infer`, shmJson, { 'content-type': 'application/json' })),
  'grpc-shm': () => throughSharedMemory(() => unary((cb) => inferClient.ModelInfer(shmInferRequest, cb))),
};

/** Checks one answer per run, so that a broken path cannot pass as a fast one. */
async function check(target: Target): Promise<void> {
  const answer = await calls[target]();
  if (target === 'http-echo' || target === 'grpc-echo') return;
  const values = Array.isArray(answer) ? answer : Array.from(new Float32Array(Uint8Array.from(answer).buffer));
  if (values.length !== floats.length || values.some((v, i) => v !== floats[i]! + (setup.model === 'tiny' ? 1 : 0))) throw new Error(`${target}: wrong answer`);
}

process.on('message', async ({ target, calls: count, concurrency }: { target: Target; calls: number; concurrency: number }) => {
  try {
    await check(target);
    process.send!(await measureLatency(calls[target], count, concurrency));
  } catch (error) {
    process.send!({ error: String(error) });
  }
});
process.on('disconnect', () => process.exit(0));
