/**
 * What tracing (docs/trace.md) costs a request over the network frontends: the tiny ONNX
 * model over HTTP JSON and gRPC, clients in a child process (bench/frontend-client.ts),
 * with trace level OFF twice (the A/A spread), TIMESTAMPS at trace_rate 1000 (the
 * frontends make a CallerTrace for every request while the tracer listens) and at
 * trace_rate 1 (every request traced, its frontend activities written), in alternating
 * rounds on one server.
 * Run: npx tsx bench/trace-frontend.ts
 */
import { fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InferenceServer, type TraceSettingChanges } from '@tritium/core';
import { onnxBackend } from '@tritium/backend-onnx';
import { protoDirectory, startGrpcFrontend, startHttpFrontend } from '@tritium/frontend';
import type { ClientSetup, Target } from './frontend-client.js';
import { formatSpread, median, ratioSpread, table } from './measure.js';
import { benchRepository } from './noop-backend.js';
import { copyOnnxModel, onnxConfig } from './tiny-onnx.js';

const ROUNDS = 7;
const repository = await benchRepository('tritium-bench-trace-frontend-', { tiny: onnxConfig('1', 'inline') });
await copyOnnxModel(repository, 'tiny', 'tiny.onnx');
const server = await InferenceServer.start({ modelRepository: repository, backends: [onnxBackend()] });
const httpFrontend = await startHttpFrontend(server, { host: '127.0.0.1', port: 0 });
const grpcFrontend = await startGrpcFrontend(server, { host: '127.0.0.1', port: 0 });
const traces = await mkdtemp(join(tmpdir(), 'tritium-bench-trace-frontend-'));
// Every 1000 traces to trace.json.<index>, so that rate 1 does not pile traces up in memory.
const traced: TraceSettingChanges = { trace_file: join(traces, 'trace.json'), log_frequency: 1000 };

// The echo targets are not used: their ports are never dialled.
const setup: ClientSetup = { httpEcho: 0, http: httpFrontend.port, grpcEcho: 0, grpc: grpcFrontend.port, proto: `${protoDirectory()}grpc_service.proto`, model: 'tiny', elements: 1, sharedMemoryKey: `/tritium-bench-${randomUUID()}` };
const client = fork(fileURLToPath(new URL('./frontend-client.ts', import.meta.url)), [JSON.stringify(setup)], { execArgv: ['--import', 'tsx'] });
const run = (target: Target, calls: number, concurrency: number) =>
  new Promise<{ requestsPerSecond: number; p50: number; serverCpuUs: number }>((resolve, reject) => {
    const cpu = process.cpuUsage();
    client.once('message', (result: { requestsPerSecond: number; p50: number; error?: string }) => {
      const { user, system } = process.cpuUsage(cpu);
      if (result.error) reject(new Error(result.error));
      else resolve({ ...result, serverCpuUs: (user + system) / calls });
    });
    client.send({ target, calls, concurrency });
  });

const settings: Record<string, TraceSettingChanges> = {
  OFF: { trace_level: ['OFF'] },
  'OFF (A/A)': { trace_level: ['OFF'] },
  'rate 1000': { ...traced, trace_level: ['TIMESTAMPS'], trace_rate: 1000 },
  'rate 1': { ...traced, trace_level: ['TIMESTAMPS'], trace_rate: 1 },
};
const rows = [];
for (const concurrency of [1, 64]) {
  const calls = concurrency === 1 ? 2000 : 10_000;
  for (const target of ['http-json', 'grpc'] as const) {
    await run(target, 500, concurrency);
    const runs = new Map<string, { requestsPerSecond: number; p50: number; serverCpuUs: number }[]>();
    for (let round = 0; round < ROUNDS; round++) {
      for (const [name, changes] of Object.entries(settings)) {
        server.updateTraceSettings(changes);
        runs.set(name, [...(runs.get(name) ?? []), await run(target, calls, concurrency)]);
        server.updateTraceSettings({ trace_level: ['OFF'] });
      }
    }
    const off = runs.get('OFF')!;
    for (const [name, results] of runs) {
      rows.push({
        path: target,
        clients: concurrency,
        tracing: name,
        'req/s': median(results.map((r) => r.requestsPerSecond)),
        'p50 µs': median(results.map((r) => r.p50)),
        'server CPU µs/req': median(results.map((r) => r.serverCpuUs)),
        // Per-round ratios to OFF: 'OFF (A/A)' gives the spread that noise alone makes.
        'req/s ÷ OFF': formatSpread(ratioSpread(results.map((r) => r.requestsPerSecond), off.map((r) => r.requestsPerSecond))),
        'CPU ÷ OFF': formatSpread(ratioSpread(results.map((r) => r.serverCpuUs), off.map((r) => r.serverCpuUs))),
      });
    }
  }
}
client.disconnect();
console.log(`\nThe tiny model over HTTP JSON and gRPC, medians of ${ROUNDS} alternating rounds`);
table(rows);
await grpcFrontend.close();
await httpFrontend.close();
await server.stop();
await rm(repository, { recursive: true, force: true });
await rm(traces, { recursive: true, force: true });
