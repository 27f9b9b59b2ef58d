/**
 * Issue 18's soak: `tritium serve` in a child process, clients here sending good and bad
 * requests over HTTP and gRPC for a long run. Clean rounds (good requests only) alternate
 * with mixed rounds (about 20% bad requests of many kinds), so a drift in machine load
 * hits both alike. It checks that every good request gets the right answer, every bad
 * one a client error (4xx / a non-internal gRPC status), nothing times out or is reset,
 * and reports the good requests' p99 in mixed rounds against clean ones and the server's
 * RSS at the start, its peak, and at the end.
 *
 * Run: npx -y pnpm@10.34.9 bench:soak [--minutes 10] (minutes of mixed rounds; clean
 * rounds add a third of that again)
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { copyFile, rm } from 'node:fs/promises';
import http from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { protoDirectory } from '@tritium/frontend';
import { median, table } from './measure.js';
import { benchRepository } from './noop-backend.js';

const { values } = parseArgs({ options: { minutes: { type: 'string', default: '10' } } });
const MIXED_ROUND_MS = 30_000;
const CLEAN_ROUND_MS = 10_000;
const mixedRounds = Math.max(1, Math.round((Number(values.minutes) * 60_000) / MIXED_ROUND_MS));
const HTTP_CLIENTS = 24;
const GRPC_CLIENTS = 8;
const BAD_SHARE = 0.2;
/** A request not answered in this long counts as hung. */
const REQUEST_TIMEOUT_MS = 30_000;

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const MODELS = join(ROOT, 'packages/backend-onnx/models');
const tinyConfig = (extra: string) => `platform: "onnxruntime_onnx"
max_batch_size: 8
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] }
parameters { key: "intra_op_thread_count" value { string_value: "1" } }
${extra}`;
const repository = await benchRepository('tritium-bench-soak-', {
  tiny: tinyConfig(''),
  // The dynamic batcher with a queue delay: a lost wake-up shows as a hung request.
  batched: tinyConfig('dynamic_batching { max_queue_delay_microseconds: 200 }'),
});
for (const model of ['tiny', 'batched']) await copyFile(join(MODELS, 'tiny.onnx'), join(repository, model, '1', 'model.onnx'));

// --- the server ---
const server = spawn(
  process.execPath,
  ['--import', 'tsx', 'packages/frontend/src/cli/main.ts', 'serve', `--model-repository=${repository}`, '--model-control-mode=explicit', '--load-model=*',
    '--http-address=127.0.0.1', '--grpc-address=127.0.0.1', '--http-port=0', '--grpc-port=0', '--allow-metrics=false', '--allow-client-shm=true', '--log-info=true'],
  { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
);
let serverOutput = '';
for (const stream of [server.stdout, server.stderr]) stream.on('data', (chunk: Buffer) => (serverOutput += chunk.toString()));
const port = async (service: string): Promise<number> => {
  for (let waited = 0; waited < 120_000; waited += 100) {
    const match = serverOutput.match(new RegExp(`Started ${service} at 127\\.0\\.0\\.1:(\\d+)`));
    if (match) return Number(match[1]);
    if (server.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the server did not start:\n${serverOutput}`);
};
const httpPort = await port('HTTPService');
const grpcPort = await port('GRPCInferenceService');
const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))![1]) / 1024;

// --- the clients ---
const agent = new http.Agent({ keepAlive: true, maxSockets: HTTP_CLIENTS + 4 });
interface Answer { status: number; body: Buffer }
function post(path: string, body: Buffer | string, headers: http.OutgoingHttpHeaders = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request({ host: '127.0.0.1', port: httpPort, path, method: 'POST', agent, headers: { 'content-type': 'application/json', ...headers } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body: Buffer.concat(chunks) }));
      response.on('error', reject);
    });
    request.setTimeout(REQUEST_TIMEOUT_MS, () => request.destroy(new Error('hung: no answer in time')));
    request.on('error', reject);
    request.end(body);
  });
}

const definition = protoLoader.loadSync(join(protoDirectory(), 'grpc_service.proto'), { keepCase: true, longs: String, enums: String, defaults: false });
const { inference } = grpc.loadPackageDefinition(definition) as unknown as { inference: { GRPCInferenceService: grpc.ServiceClientConstructor } };
type GrpcCall = (request: object, options: grpc.CallOptions, callback: (error: grpc.ServiceError | null, response?: { raw_output_contents: Buffer[] }) => void) => void;
const grpcChannel = new inference.GRPCInferenceService(`127.0.0.1:${grpcPort}`, grpc.credentials.createInsecure());
const grpcClient = grpcChannel as unknown as Record<string, GrpcCall>;
function rpc(method: string, request: object): Promise<{ code: number; raw?: Buffer }> {
  return new Promise((resolve) => {
    grpcClient[method]!.call(grpcClient, request, { deadline: Date.now() + REQUEST_TIMEOUT_MS }, (error, response) =>
      resolve(error ? { code: error.code } : { code: grpc.status.OK, raw: response?.raw_output_contents?.[0] }),
    );
  });
}

// Shared memory a client on this host made: one region for inputs, registered once.
const shmKey = `/tritium-soak-${randomUUID()}`;
writeFileSync(`/dev/shm${shmKey}`, Buffer.from(Float32Array.of(41).buffer));
const registered = await post('/v2/systemsharedmemory/region/soak_in/register', JSON.stringify({ key: shmKey, offset: 0, byte_size: 4 }));
if (registered.status !== 200) throw new Error(`registering shared memory failed: ${registered.body}`);

const floatBytes = (value: number) => Buffer.from(Float32Array.of(value).buffer);
const httpInfer = (model: string, value: number) =>
  post(`/v2/models/${model}/infer`, JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, 1], datatype: 'FP32', data: [value] }] }));

/** One good request: its answer must be x + 1. */
type Good = () => Promise<void>;
const expectOutput = (got: number, value: number, what: string) => {
  if (got !== value + 1) throw new Error(`${what}: wrong answer ${got} for ${value}`);
};
const goodHttp: Good[] = ['tiny', 'batched'].map((model) => async () => {
  const value = Math.round(Math.random() * 1000);
  const { status, body } = await httpInfer(model, value);
  if (status !== 200) throw new Error(`HTTP ${model}: ${status} ${body}`);
  expectOutput((JSON.parse(body.toString()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data[0]!, value, `HTTP ${model}`);
});
goodHttp.push(async () => {
  const { status, body } = await post('/v2/models/tiny/infer', JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, 1], datatype: 'FP32', parameters: { shared_memory_region: 'soak_in', shared_memory_byte_size: 4 } }] }));
  if (status !== 200) throw new Error(`HTTP shared memory: ${status} ${body}`);
  expectOutput((JSON.parse(body.toString()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data[0]!, 41, 'HTTP shared memory');
});
const goodGrpc: Good[] = ['tiny', 'batched'].map((model) => async () => {
  const value = Math.round(Math.random() * 1000);
  const { code, raw } = await rpc('ModelInfer', { model_name: model, inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1] }], raw_input_contents: [floatBytes(value)] });
  if (code !== grpc.status.OK) throw new Error(`gRPC ${model}: status ${code}`);
  expectOutput(raw!.readFloatLE(0), value, `gRPC ${model}`);
});

/** One bad request: it must be refused as the client's fault, and nothing else may suffer. */
type Bad = { name: string; send: () => Promise<boolean> };
const clientError = (answer: Answer) => answer.status >= 400 && answer.status < 500;
const nested = (depth: number) => '['.repeat(depth) + '1' + ']'.repeat(depth);
const badHttp: Bad[] = [
  { name: 'malformed JSON', send: async () => clientError(await post('/v2/models/tiny/infer', '{"inputs": [')) },
  { name: 'unknown model', send: async () => clientError(await httpInfer('nope', 1)) },
  { name: 'wrong shape', send: async () => clientError(await post('/v2/models/tiny/infer', JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, 3], datatype: 'FP32', data: [1, 2, 3] }] }))) },
  { name: 'wrong datatype', send: async () => clientError(await post('/v2/models/tiny/infer', JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, 1], datatype: 'INT64', data: [1] }] }))) },
  { name: 'too few elements', send: async () => clientError(await post('/v2/models/batched/infer', JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [4, 1], datatype: 'FP32', data: [1] }] }))) },
  { name: 'nesting 10,000 deep', send: async () => clientError(await post('/v2/models/tiny/infer', `{"inputs":[{"name":"INPUT0","shape":[1,1],"datatype":"FP32","data":${nested(10_000)}}]}`)) },
  {
    name: 'binary_data_size past the body',
    send: async () => {
      const header = JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, 1], datatype: 'FP32', parameters: { binary_data_size: 4_000_000 } }] });
      return clientError(await post('/v2/models/tiny/infer', Buffer.concat([Buffer.from(header), floatBytes(1)]), { 'inference-header-content-length': Buffer.byteLength(header) }));
    },
  },
  {
    name: 'unregistered shared memory',
    send: async () => clientError(await post('/v2/models/tiny/infer', JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, 1], datatype: 'FP32', parameters: { shared_memory_region: 'nope', shared_memory_byte_size: 4 } }] }))),
  },
  {
    name: 'shared memory larger than the input',
    send: async () => clientError(await post('/v2/models/tiny/infer', JSON.stringify({ inputs: [{ name: 'INPUT0', shape: [1, 1], datatype: 'FP32', parameters: { shared_memory_region: 'soak_in', shared_memory_byte_size: 400 } }] }))),
  },
  { name: 'shared memory key outside /dev/shm', send: async () => clientError(await post('/v2/systemsharedmemory/region/evil/register', JSON.stringify({ key: '../../etc/passwd', offset: 0, byte_size: 16 }))) },
  {
    name: 'load with 100,000 instances',
    send: async () => clientError(await post('/v2/repository/models/tiny_many/load', JSON.stringify({ parameters: { config: JSON.stringify({ platform: 'onnxruntime_onnx', instance_group: [{ count: 100_000, kind: 'KIND_CPU' }] }) } }))),
  },
];
const grpcClientError = (code: number) => code !== grpc.status.OK && code !== grpc.status.INTERNAL && code !== grpc.status.UNKNOWN && code !== grpc.status.DEADLINE_EXCEEDED;
const badGrpc: Bad[] = [
  { name: 'gRPC unknown model', send: async () => grpcClientError((await rpc('ModelInfer', { model_name: 'nope', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1] }], raw_input_contents: [floatBytes(1)] })).code) },
  { name: 'gRPC raw size mismatch', send: async () => grpcClientError((await rpc('ModelInfer', { model_name: 'tiny', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1] }], raw_input_contents: [Buffer.alloc(12)] })).code) },
  { name: 'gRPC contents count mismatch', send: async () => grpcClientError((await rpc('ModelInfer', { model_name: 'tiny', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1], contents: { fp32_contents: new Array(100_000).fill(1) } }] })).code) },
  { name: 'gRPC huge shape', send: async () => grpcClientError((await rpc('ModelInfer', { model_name: 'batched', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [2 ** 40, 1] }], raw_input_contents: [floatBytes(1)] })).code) },
];

/** What one round saw. */
interface Round { mixed: boolean; good: number; bad: number; latenciesUs: number[]; failures: Map<string, number> }

async function runRound(mixed: boolean, durationMs: number): Promise<Round> {
  const round: Round = { mixed, good: 0, bad: 0, latenciesUs: [], failures: new Map() };
  const fail = (what: string) => round.failures.set(what, (round.failures.get(what) ?? 0) + 1);
  const end = performance.now() + durationMs;
  const client = async (goods: Good[], bads: Bad[]) => {
    while (performance.now() < end) {
      if (mixed && Math.random() < BAD_SHARE) {
        const bad = bads[Math.floor(Math.random() * bads.length)]!;
        try {
          if (!(await bad.send())) fail(`${bad.name}: not refused as a client error`);
        } catch (error) {
          fail(`${bad.name}: ${(error as Error).message}`);
        }
        round.bad++;
        continue;
      }
      const start = performance.now();
      try {
        await goods[Math.floor(Math.random() * goods.length)]!();
        round.latenciesUs.push((performance.now() - start) * 1000);
      } catch (error) {
        fail(`good request: ${(error as Error).message.slice(0, 200)}`);
      }
      round.good++;
    }
  };
  await Promise.all([
    ...Array.from({ length: HTTP_CLIENTS }, () => client(goodHttp, badHttp)),
    ...Array.from({ length: GRPC_CLIENTS }, () => client(goodGrpc, badGrpc)),
  ]);
  return round;
}

const p99 = (latencies: number[]) => [...latencies].sort((a, b) => a - b)[Math.floor(latencies.length * 0.99)] ?? NaN;
await runRound(false, 5_000); // warm-up
const rssStart = rssMb();
let rssPeak = rssStart;
const rounds: Round[] = [];
for (let i = 0; i < mixedRounds; i++) {
  for (const mixed of [false, true]) {
    const round = await runRound(mixed, mixed ? MIXED_ROUND_MS : CLEAN_ROUND_MS);
    rounds.push(round);
    rssPeak = Math.max(rssPeak, rssMb());
    console.log(`round ${rounds.length}: ${mixed ? 'mixed' : 'clean'}, ${round.good} good (p99 ${p99(round.latenciesUs).toFixed(0)} µs), ${round.bad} bad, ${[...round.failures.values()].reduce((a, b) => a + b, 0)} failures, server RSS ${rssMb().toFixed(0)} MB`);
  }
}
// Memory given back: let the server idle, then read its RSS.
await new Promise((resolve) => setTimeout(resolve, 10_000));
const rssEnd = rssMb();

const failures = new Map<string, number>();
for (const round of rounds) for (const [what, count] of round.failures) failures.set(what, (failures.get(what) ?? 0) + count);
const clean = rounds.filter((r) => !r.mixed);
const mixed = rounds.filter((r) => r.mixed);
const ratios = mixed.map((round, i) => p99(round.latenciesUs) / p99(clean[i]!.latenciesUs));
console.log(`\nSoak: ${mixedRounds} mixed rounds of ${MIXED_ROUND_MS / 1000} s (${(BAD_SHARE * 100).toFixed(0)}% bad) alternating with clean rounds of ${CLEAN_ROUND_MS / 1000} s; ${HTTP_CLIENTS} HTTP and ${GRPC_CLIENTS} gRPC clients`);
table([
  { rounds: 'clean', 'good requests': clean.reduce((n, r) => n + r.good, 0), 'bad requests': '0', 'median p99 µs': median(clean.map((r) => p99(r.latenciesUs))) },
  { rounds: 'mixed', 'good requests': mixed.reduce((n, r) => n + r.good, 0), 'bad requests': mixed.reduce((n, r) => n + r.bad, 0), 'median p99 µs': median(mixed.map((r) => p99(r.latenciesUs))) },
]);
console.log(`p99 mixed ÷ clean, per pair of rounds: median ${median(ratios).toFixed(2)}, range ${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)}`);
console.log(`server RSS: ${rssStart.toFixed(0)} MB at the start, ${rssPeak.toFixed(0)} MB at its peak, ${rssEnd.toFixed(0)} MB 10 s after the end`);
if (failures.size === 0) console.log('nothing lost: every good request answered right, every bad one refused as a client error');
else table([...failures].map(([what, count]) => ({ failure: what, count: String(count) })));

grpcChannel.close();
agent.destroy();
server.kill('SIGTERM');
await new Promise((resolve) => server.once('exit', resolve));
rmSync(`/dev/shm${shmKey}`, { force: true });
await rm(repository, { recursive: true, force: true });
if (failures.size > 0) process.exitCode = 1;
