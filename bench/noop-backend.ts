import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InferenceServer, type ServerOptions, type Tensor } from '@tritium/core';
import type { Backend, BackendRequest, ExecuteResult } from '@tritium/core/backend';

/** The no-op backend's instance: its execute always answers with a promise, as most backends' do. */
type NoopInstance = { execute(requests: readonly BackendRequest[]): Promise<ExecuteResult> };

/** The config of a model the no-op backend serves: FP32 INPUT0 [4] → OUTPUT0 [4], then `extra`. */
export const noopConfig = (extra = '') => `backend: "noop"
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] }
${extra}`;

/** A batch of one for a no-op model of max_batch_size > 0. */
export const noopInput: Tensor = { datatype: 'FP32', shape: [1, 4], data: new Float32Array(4) };

/**
 * A backend whose models hand each request's INPUT0 back as OUTPUT0, so a benchmark
 * measures the server alone. It keeps its last instance, for calling it directly.
 */
export function noopBackend(): Backend & { instance?: NoopInstance } {
  const backend: Backend & { instance?: NoopInstance } = {
    name: 'noop',
    async createModel() {
      return {
        async createInstance() {
          backend.instance = { async execute(requests) { return requests.map((request) => ({ OUTPUT0: request.inputs.INPUT0! })); } };
          return backend.instance;
        },
      };
    },
  };
  return backend;
}

/** A temp repository of the given models (name → config.pbtxt), each with a version directory. */
export async function benchRepository(prefix: string, configs: Record<string, string>): Promise<string> {
  const repository = await mkdtemp(join(tmpdir(), prefix));
  for (const [name, config] of Object.entries(configs)) {
    await mkdir(join(repository, name, '1'), { recursive: true });
    await writeFile(join(repository, name, 'config.pbtxt'), config);
  }
  return repository;
}

/**
 * A server of one no-op model, `noop` (max_batch_size 8), and the two calls the overhead
 * benchmarks compare: the backend's execute() directly and server.infer(), on the same
 * [1, 4] input, and the server itself (`options` added to its ServerOptions). close() stops
 * the server and removes its repository.
 */
export async function noopServing(options: Partial<ServerOptions> = {}): Promise<{ server: InferenceServer; callDirect: () => Promise<unknown>; callServer: () => Promise<unknown>; close: () => Promise<void> }> {
  const noop = noopBackend();
  const repository = await benchRepository('tritium-bench-', { noop: noopConfig('max_batch_size: 8') });
  const server = await InferenceServer.start({ modelRepository: repository, backends: [noop], ...options });
  const direct: BackendRequest[] = [{
    id: '1', modelName: 'noop', modelVersion: 1, inputs: { INPUT0: noopInput }, requestedOutputs: ['OUTPUT0'],
    parameters: {}, batchSize: 1, priority: 0, timeoutMicroseconds: 0, sequence: undefined, isCancelled: false, onCancel: () => () => {},
    response: { send() {}, close() {}, fail() {} },
  }];
  return {
    server,
    callDirect: () => noop.instance!.execute(direct),
    callServer: () => server.infer('noop', { inputs: { INPUT0: noopInput } }),
    close: async () => {
      await server.stop();
      await rm(repository, { recursive: true, force: true });
    },
  };
}
