import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Backend, BackendInstance } from '@tritium/core/backend';

/** The config of a model the no-op backend serves: FP32 INPUT0 [4] → OUTPUT0 [4], then `extra`. */
export const noopConfig = (extra = '') => `backend: "noop"
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] }
${extra}`;

/**
 * A backend whose models hand each request's INPUT0 back as OUTPUT0, so a benchmark
 * measures the server alone. It keeps its last instance, for calling it directly.
 */
export function noopBackend(): Backend & { instance?: BackendInstance } {
  const backend: Backend & { instance?: BackendInstance } = {
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
