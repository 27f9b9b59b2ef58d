import { InferenceServer } from '@tritium/core';
import type { InferRequest, Tensor } from '@tritium/core';
import { onnxBackend } from '../src/index.js';
import type { OnnxBackendOptions } from '../src/index.js';
import { TempRepository } from './helpers.js';

export interface ModelSpec {
  /** A committed artifact name (models/<artifact>.onnx), raw bytes for model.onnx, or null for none. */
  readonly artifact: string | Uint8Array | null;
  /** config.pbtxt text; none means auto-complete from the model. */
  readonly config?: string;
}

/** A server over a temporary repository, with the ONNX backend; stop() removes everything. */
export class ServerHarness {
  private constructor(
    readonly server: InferenceServer,
    private readonly repo: TempRepository,
  ) {}

  static async start(models: Record<string, ModelSpec>, options: OnnxBackendOptions = {}): Promise<ServerHarness> {
    const repo = await TempRepository.create();
    try {
      for (const [name, spec] of Object.entries(models)) await repo.addModel(name, spec.artifact, { config: spec.config });
      const server = await InferenceServer.start({ modelRepository: repo.root, backends: [onnxBackend(options)] });
      return new ServerHarness(server, repo);
    } catch (error) {
      await repo.cleanup();
      throw error;
    }
  }

  async infer(model: string, inputs: InferRequest['inputs'], outputs?: readonly string[]): Promise<Record<string, Tensor>> {
    const response = await this.server.infer(model, { inputs, outputs });
    return response.outputs;
  }

  /** The model's state line: READY with the backend's description, or UNAVAILABLE with the reason. */
  async state(model: string): Promise<{ state: string; reason: string }> {
    const index = await this.server.repositoryIndex();
    const entry = index.find((e) => e.name === model);
    if (!entry) throw new Error(`model '${model}' is not in the repository index`);
    return { state: entry.state, reason: entry.reason };
  }

  async stop(): Promise<void> {
    try {
      await this.server.stop();
    } finally {
      await this.repo.cleanup();
    }
  }
}
