import type { OnnxSession, RunResult, SessionMetadata, TensorPayload } from './onnx-session.js';
import type { OrtRuntime, OrtSession, OrtSessionOptions, OrtTensor, SessionSource } from './runtime.js';

/**
 * A session on the thread that calls infer(): no handoff, but each run holds that
 * thread's event loop. Chosen for models whose runs are shorter than a worker round trip.
 */
export class InlineSession implements OnnxSession {
  readonly thread = 'inline';
  private released = false;

  private constructor(
    private readonly runtime: OrtRuntime,
    private readonly session: OrtSession,
  ) {}

  static async open(runtime: OrtRuntime, source: SessionSource, options: OrtSessionOptions): Promise<InlineSession> {
    return new InlineSession(runtime, await runtime.createSession(source, options));
  }

  get metadata(): SessionMetadata {
    return this.session;
  }

  async run(feeds: Record<string, TensorPayload>, fetches: readonly string[]): Promise<RunResult> {
    const { Tensor } = this.runtime.ort;
    const tensors: Record<string, OrtTensor> = {};
    for (const name in feeds) {
      const { type, data, dims } = feeds[name]!;
      tensors[name] = new Tensor(type as 'float32', data as Float32Array, dims);
    }
    return { outputs: (await this.runtime.run(this.session, tensors, fetches)) as Record<string, TensorPayload> };
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    try {
      await this.runtime.release(this.session);
    } catch {
      // Only ever called on the way out: a runtime shutting down has freed it already.
    }
  }

  /** An inline session only ends when released. */
  onLost(): () => void {
    return () => {};
  }
}
