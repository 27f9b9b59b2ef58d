import { createRequire } from 'node:module';
import type { RunResult, TensorPayload } from './onnx-session.js';
import type { Ort, OrtFeeds, OrtResults, OrtSessionOptions, OrtTensor } from './runtime.js';

/** onnxruntime-node's native session as its binding exposes it (onnxruntime-node/dist/binding). */
interface NativeSession {
  loadModel(path: string, options: OrtSessionOptions): void;
  run(feeds: OrtFeeds, fetches: Record<string, null>, options: object): OrtResults;
  dispose(): void;
}

interface NativeBinding {
  binding: { InferenceSession: new () => NativeSession };
  initOrt(): void;
}

/**
 * onnxruntime-node's native session, run synchronously. Its public `run` starts every
 * run from a `setImmediate`, a turn of the event loop that costs ~2 µs of a tiny
 * model's 8 µs and makes 64 callers' runs wait for one turn each; the runs "auto"
 * sends inline are short, so the inline lane calls the binding directly. It opens a
 * file only, with no metadata: the lane serves a model already opened on the pool.
 */
export class BindingSession {
  private constructor(
    private readonly ort: Ort,
    private readonly native: NativeSession,
  ) {}

  /**
   * The binding of the onnxruntime-node that `ort` is, when it has the shape this code
   * knows (1.30); undefined otherwise, and the lane then uses the public API.
   */
  static opener(ort: Ort): ((path: string, options: OrtSessionOptions) => BindingSession) | undefined {
    let loaded: NativeBinding;
    try {
      loaded = createRequire(import.meta.url)('onnxruntime-node/dist/binding') as NativeBinding;
    } catch {
      return undefined;
    }
    const Native = loaded.binding?.InferenceSession;
    if (typeof loaded.initOrt !== 'function' || typeof Native !== 'function') return undefined;
    const methods = Native.prototype as Partial<NativeSession>;
    if (typeof methods.loadModel !== 'function' || typeof methods.run !== 'function' || typeof methods.dispose !== 'function') return undefined;
    return (path, options) => {
      loaded.initOrt();
      const native = new Native();
      native.loadModel(path, options);
      return new BindingSession(ort, native);
    };
  }

  run(feeds: Record<string, TensorPayload>, fetches: readonly string[]): RunResult {
    const { Tensor } = this.ort;
    const tensors: Record<string, OrtTensor> = {};
    for (const name in feeds) {
      const { type, data, dims } = feeds[name]!;
      tensors[name] = new Tensor(type as 'float32', data as Float32Array, dims);
    }
    const wanted: Record<string, null> = {};
    for (const name of fetches) wanted[name] = null;
    return { outputs: this.native.run(tensors, wanted, {}) as Record<string, TensorPayload> };
  }

  release(): void {
    this.native.dispose();
  }
}
