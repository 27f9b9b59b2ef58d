/**
 * The network frontends' figures (issue 10), clients in a child process so that client
 * and server each have a core:
 * 1. the tiny model at batch 1, 1 and 64 concurrent clients: in-process server.infer(),
 *    HTTP JSON, HTTP binary and gRPC, each against the floor of its transport measured in
 *    the same rounds with the same client (a bare node:http echo server, a bare
 *    @grpc/grpc-js echo service): requests/s, p50/p99, and what the frontend adds;
 * 2. a 16 MB tensor through the identity model over HTTP binary, gRPC and shared memory: GB/s.
 * Run: npx -y pnpm@10.34.9 bench:frontend
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { InferenceServer } from '@tritium/core';
import { onnxBackend } from '@tritium/backend-onnx';
import { protoDirectory, startGrpcFrontend, startHttpFrontend } from '@tritium/frontend';
import type { ClientSetup, Target } from './frontend-client.js';
import { measureLatency, median, table } from './measure.js';
import { benchRepository } from './noop-backend.js';
import { copyOnnxModel, onnxConfig } from './tiny-onnx.js';

const ROUNDS = 5;
const repository = await benchRepository('tritium-bench-frontend-', { tiny: onnxConfig('1', 'inline'), identity: onnxConfig('-1', 'worker') });
await copyOnnxModel(repository, 'tiny', 'tiny.onnx');
await copyOnnxModel(repository, 'identity', 'identity_fp32.onnx');
const server = await InferenceServer.start({ modelRepository: repository, backends: [onnxBackend()] });
const httpFrontend = await startHttpFrontend(server, { host: '127.0.0.1', port: 0, allowClientSharedMemory: true });
const grpcFrontend = await startGrpcFrontend(server, { host: '127.0.0.1', port: 0, allowClientSharedMemory: true });

// The floors: the same bytes in and out with nothing in between.
const httpEcho = http.createServer({ keepAliveTimeout: 60_000 }, (request, response) => {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(Buffer.concat(chunks)));
});
await new Promise<void>((resolve) => httpEcho.listen(0, '127.0.0.1', resolve));
const grpcEcho = new grpc.Server();
const identity = (b: Buffer) => b;
grpcEcho.addService(
  { Echo: { path: '/bench.Echo/Echo', requestStream: false, responseStream: false, requestSerialize: identity, requestDeserialize: identity, responseSerialize: identity, responseDeserialize: identity } },
  { Echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => callback(null, call.request) },
);
const grpcEchoPort = await new Promise<number>((resolve, reject) =>
  grpcEcho.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (error, port) => (error ? reject(error) : resolve(port))),
);

/** A run's rate and latency percentiles (µs), seen by the client, and the server process's CPU time per request (µs). */
type Latency = { requestsPerSecond: number; p50: number; p99: number; serverCpuUs: number };

/** A client process for one model and tensor size. */
function startClient(model: ClientSetup['model'], elements: number) {
  const setup: ClientSetup = {
    httpEcho: (httpEcho.address() as { port: number }).port,
    http: httpFrontend.port,
    grpcEcho: grpcEchoPort,
    grpc: grpcFrontend.port,
    proto: `${protoDirectory()}grpc_service.proto`,
    model,
    elements,
    sharedMemoryKey: `/tritium-bench-${randomUUID()}`,
  };
  const child = fork(fileURLToPath(new URL('./frontend-client.ts', import.meta.url)), [JSON.stringify(setup)], { execArgv: ['--import', 'tsx'] });
  const run = (target: Target, calls: number, concurrency: number) =>
    new Promise<Latency>((resolve, reject) => {
      const cpu = process.cpuUsage();
      child.once('message', (result: Latency & { error?: string }) => {
        const { user, system } = process.cpuUsage(cpu);
        if (result.error) reject(new Error(result.error));
        else resolve({ ...result, serverCpuUs: (user + system) / calls });
      });
      child.send({ target, calls, concurrency });
    });
  return { run, stop: () => (child.disconnect(), rmSync(`/dev/shm${setup.sharedMemoryKey}`, { force: true })) };
}

const medianOf = (runs: Latency[]): Latency => ({
  requestsPerSecond: median(runs.map((r) => r.requestsPerSecond)),
  p50: median(runs.map((r) => r.p50)),
  p99: median(runs.map((r) => r.p99)),
  serverCpuUs: median(runs.map((r) => r.serverCpuUs)),
});

// 1. Batch 1, alternating rounds of every target.
const tiny = startClient('tiny', 1);
const input = { inputs: { INPUT0: { datatype: 'FP32' as const, shape: [1, 1], data: Float32Array.of(1) } } };
const pairs: Array<[Target, Target]> = [['http-echo', 'http-json'], ['http-echo', 'http-binary'], ['grpc-echo', 'grpc']];
for (const concurrency of [1, 64]) {
  const calls = concurrency === 1 ? 2000 : 10_000;
  const runs = new Map<string, Latency[]>();
  const record = (name: string, result: Latency) => runs.set(name, [...(runs.get(name) ?? []), result]);
  for (const target of ['http-echo', 'http-json', 'http-binary', 'grpc-echo', 'grpc'] as const) await tiny.run(target, 500, concurrency);
  for (let round = 0; round < ROUNDS; round++) {
    const cpu = process.cpuUsage();
    const inProcess = await measureLatency(() => server.infer('tiny', input), calls, concurrency);
    const { user, system } = process.cpuUsage(cpu);
    record('in-process', { ...inProcess, serverCpuUs: (user + system) / calls });
    for (const target of ['http-echo', 'http-json', 'http-binary', 'grpc-echo', 'grpc'] as const) record(target, await tiny.run(target, calls, concurrency));
  }
  const byName = new Map([...runs].map(([name, results]) => [name, medianOf(results)]));
  console.log(`\nTiny model, batch 1, ${concurrency} concurrent client(s), medians of ${ROUNDS} alternating rounds`);
  table([...byName].map(([name, r]) => ({ path: name, 'req/s': r.requestsPerSecond, 'p50 µs': r.p50, 'p99 µs': r.p99, 'server CPU µs/request': r.serverCpuUs })));
  table(
    pairs.map(([floor, path]) => {
      const addedP50 = median(runs.get(path)!.map((r, i) => r.p50 - runs.get(floor)![i]!.p50));
      const ratio = median(runs.get(path)!.map((r, i) => r.requestsPerSecond / runs.get(floor)![i]!.requestsPerSecond));
      const addedCpu = median(runs.get(path)!.map((r, i) => r.serverCpuUs - runs.get(floor)![i]!.serverCpuUs));
      return { path, floor, 'p50 added µs': addedP50, 'req/s ÷ floor': ratio, 'server CPU added µs/request': addedCpu };
    }),
  );
}
tiny.stop();

// 2. 16 MB of FP32 in and out per request.
const elements = (16 * 1024 * 1024) / 4;
const big = startClient('identity', elements);
const bigRuns = new Map<Target, Latency[]>();
for (const target of ['http-binary', 'grpc', 'http-shm', 'grpc-shm'] as const) await big.run(target, 3, 1);
for (let round = 0; round < ROUNDS; round++) {
  for (const target of ['http-binary', 'grpc', 'http-shm', 'grpc-shm'] as const) bigRuns.set(target, [...(bigRuns.get(target) ?? []), await big.run(target, 10, 1)]);
}
big.stop();
console.log(`\n16 MB FP32 tensor in and 16 MB out per request (identity model), one client, medians of ${ROUNDS} rounds`);
table(
  [...bigRuns].map(([target, runs]) => {
    const { p50 } = medianOf(runs);
    return { path: target, 'ms per request': p50 / 1000, 'GB/s (16 MB ÷ p50)': 16 * 1024 * 1024 / (p50 / 1e6) / 1e9 };
  }),
);

await Promise.all([httpFrontend.close(), grpcFrontend.close(), new Promise((resolve) => httpEcho.close(resolve)), new Promise((resolve) => grpcEcho.tryShutdown(resolve))]);
await server.stop();
await rm(repository, { recursive: true, force: true });
