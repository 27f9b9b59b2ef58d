/**
 * What `server.infer()` adds per request over calling a backend's execute directly,
 * on a no-op backend: sequential, and with 64 concurrent callers.
 * Run: npx -y pnpm@10.34.9 bench:core
 */
import { mkdtemp, rm, mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InferenceServer, type Backend, type BackendInstance, type BackendRequest, type Tensor } from '@tritium/core';
import { median, measureRate, table } from './measure.js';

const CALLS = 100_000;
const input: Tensor = { datatype: 'FP32', shape: [1, 4], data: new Float32Array(4) };

let instance: BackendInstance | undefined;
const noop: Backend = {
  name: 'noop',
  async createModel() {
    return {
      async createInstance() {
        instance = { async execute(requests) { return requests.map(() => ({ OUTPUT0: input })); } };
        return instance;
      },
    };
  },
};

const repository = await mkdtemp(join(tmpdir(), 'tritium-bench-'));
await mkdir(join(repository, 'noop', '1'), { recursive: true });
await writeFile(join(repository, 'noop', '1', 'model'), '');
await writeFile(
  join(repository, 'noop', 'config.pbtxt'),
  `backend: "noop"
max_batch_size: 8
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] }`,
);
const server = await InferenceServer.start({ modelRepository: repository, backends: [noop] });

const direct: BackendRequest[] = [{
  id: '1', modelName: 'noop', modelVersion: 1, inputs: { INPUT0: input }, requestedOutputs: ['OUTPUT0'],
  parameters: {}, batchSize: 1, priority: 0, timeoutMicroseconds: 0, sequence: undefined, isCancelled: false, onCancel: () => () => {},
  response: { send() {}, close() {}, fail() {} },
}];
const callDirect = () => instance!.execute(direct);
const callServer = () => server.infer('noop', { inputs: { INPUT0: input } });

const rows = [];
for (const concurrency of [1, 64]) {
  const rate = (once: () => Promise<unknown>) => measureRate(once, CALLS / 10, concurrency);
  // Alternating rounds, so a drift in machine load hits both alike.
  const base: number[] = [];
  const served: number[] = [];
  await rate(callDirect);
  await rate(callServer);
  for (let round = 0; round < 15; round++) {
    base.push((await rate(callDirect)).usPerRequest);
    served.push((await rate(callServer)).usPerRequest);
  }
  const direct = median(base);
  const infer = median(served);
  rows.push({
    callers: concurrency,
    'direct µs/req': direct,
    'infer() µs/req': infer,
    'added µs/req': infer - direct,
    'direct req/s': 1e6 / direct,
    'infer() req/s': 1e6 / infer,
    'ratio infer/direct': infer / direct,
  });
}
console.log(`server.infer() vs backend execute() on a no-op backend, ${CALLS / 10} calls per round, medians of 15 alternating rounds`);
table(rows);

await server.stop();
await rm(repository, { recursive: true, force: true });
