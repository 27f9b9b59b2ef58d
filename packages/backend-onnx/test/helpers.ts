import { afterAll, beforeAll } from 'vitest';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DETACHED } from '../../core/test/helpers/detached.js';
import { validateModelConfig, type Backend, type ModelConfig, type Tensor } from '@tritium/core';
import type { BackendInstance, BackendModel, BackendRequest, ExecuteResult, InstanceHealth, ModelContext, ModelFiles } from '@tritium/core/backend';

/** The committed test models (see models/generate.py). */
export const MODELS = fileURLToPath(new URL('../models/', import.meta.url));

export function modelArtifact(name: string): string {
  return join(MODELS, `${name}.onnx`);
}

/** A temporary repository shared by a test file's tests, created before them and removed after. */
export function useTempRepository(): { readonly current: TempRepository } {
  const holder = {} as { current: TempRepository };
  beforeAll(async () => {
    holder.current = await TempRepository.create();
  });
  afterAll(async () => {
    await holder.current.cleanup();
  });
  return holder;
}

/** A temporary model repository, removed by cleanup(). */
export class TempRepository {
  private constructor(readonly root: string) {}

  static async create(): Promise<TempRepository> {
    return new TempRepository(await mkdtemp(join(tmpdir(), 'tritium-onnx-')));
  }

  /**
   * Adds `<name>/<version>/model.onnx` copied from a committed artifact (a file or a
   * model.onnx directory), or written from bytes (null: an empty version directory),
   * with config.pbtxt text when given.
   */
  async addModel(name: string, model: string | Uint8Array | null, options: { config?: string; version?: number } = {}): Promise<ModelFiles> {
    const modelDirectory = join(this.root, name);
    const versionDirectory = join(modelDirectory, String(options.version ?? 1));
    await mkdir(versionDirectory, { recursive: true });
    const modelPath = join(versionDirectory, 'model.onnx');
    if (typeof model === 'string') await cp(modelArtifact(model), modelPath, { recursive: true });
    else if (model) await writeFile(modelPath, model);
    if (options.config !== undefined) await writeFile(join(modelDirectory, 'config.pbtxt'), options.config);
    return { modelDirectory, versionDirectory, modelPath, version: options.version ?? 1 };
  }

  async cleanup(): Promise<void> {
    await rm(this.root, { recursive: true, force: true });
  }
}

/** Drives a Backend directly, as the server would: auto-complete, create the model, then instances. */
export async function loadDirect(
  backend: Backend,
  repo: TempRepository,
  name: string,
  artifact: string | Uint8Array,
  config: ModelConfig = {},
  instances = 1,
  /** The server's count of requests in flight, as the model's context gives it (none, loaded without a server). */
  requestsInFlight: ModelContext['requestsInFlight'] = DETACHED.requestsInFlight,
): Promise<{ model: BackendModel; instances: BackendInstance[]; config: ModelConfig }> {
  const files = await repo.addModel(name, artifact);
  let full: ModelConfig = { name, backend: 'onnxruntime', ...config };
  if (backend.autoCompleteConfig) full = await backend.autoCompleteConfig(full, files);
  const context: ModelContext = { ...files, name, config: validateModelConfig(full), ...DETACHED, requestsInFlight };
  const model = await backend.createModel(context);
  const created: BackendInstance[] = [];
  for (let i = 0; i < instances; i++) created.push(await model.createInstance({ name: `${name}_0_${i}`, kind: 'KIND_CPU', health: new HealthLog() }));
  return { model, instances: created, config: full };
}

/** An instance's health reports, as the server would receive them. */
export class HealthLog implements InstanceHealth {
  readonly reports: string[] = [];
  recovering(reason: string): void {
    this.reports.push(`recovering: ${reason}`);
  }
  restored(): void {
    this.reports.push('restored');
  }
  failed(reason: string): void {
    this.reports.push(`failed: ${reason}`);
  }
}

export { DETACHED };

let nextId = 0;

/** A BackendRequest as the server hands it to a backend. */
export function request(
  inputs: Record<string, Tensor>,
  requestedOutputs: readonly string[],
  options: { batchSize?: number; modelName?: string; cancelled?: boolean } = {},
): BackendRequest {
  const first = Object.values(inputs)[0];
  return {
    id: `r${nextId++}`,
    modelName: options.modelName ?? 'm',
    modelVersion: 1,
    inputs,
    requestedOutputs,
    parameters: {},
    batchSize: options.batchSize ?? first?.shape[0] ?? 1,
    priority: 0,
    timeoutMicroseconds: 0,
    sequence: undefined,
    isCancelled: options.cancelled ?? false,
    onCancel: () => () => {},
    response: { send() {}, close() {}, fail() {} },
  };
}

/** The MLP reference written by generate.py. */
export async function mlpExpected(): Promise<{ batch: number; dims: number[]; output: number[] }> {
  return JSON.parse(await readFile(join(MODELS, 'mlp_expected.json'), 'utf8'));
}

/** The MLP input generate.py used for its reference (exact small floats). */
export function mlpInput(batch: number, width = 256): Float32Array {
  const x = new Float32Array(batch * width);
  for (let i = 0; i < batch; i++) {
    for (let j = 0; j < width; j++) x[i * width + j] = Math.fround(Math.fround(((i * 31 + j * 17) % 13) / 13) - 0.5);
  }
  return x;
}

export function fp32(values: number[] | Float32Array, shape: number[]): Tensor {
  return { datatype: 'FP32', shape, data: Float32Array.from(values) };
}

export function range(n: number, start = 0, step = 1): number[] {
  return Array.from({ length: n }, (_, i) => start + i * step);
}

/** The output maps of an execute() result, throwing the first per-request error. */
export function outputsOf(result: ExecuteResult | void): Array<Record<string, Tensor>> {
  if (!result) throw new Error('execute() returned nothing');
  return result.map((r) => {
    if (r instanceof Error) throw r;
    return r as Record<string, Tensor>;
  });
}
