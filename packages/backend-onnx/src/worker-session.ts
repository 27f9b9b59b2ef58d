import { Worker, type ResourceLimits } from 'node:worker_threads';
import { InferenceError } from '@tritium/core';
import type { OnnxSession, RunResult, SessionMetadata, TensorPayload } from './onnx-session.js';
import type { OrtRuntime, OrtSessionOptions, SessionSource } from './runtime.js';

const WORKER_SCRIPT = new URL('./session-worker.mjs', import.meta.url);

/**
 * Keeps the process alive while any run is pending, and only then: idle workers are
 * unref'd. A timer's ref()/unref() is a flag, where a Worker's costs some 60 µs a call.
 */
const keepAlive = (() => {
  let holders = 0;
  const timer = setInterval(() => {}, 2 ** 30);
  timer.unref();
  return {
    hold: () => {
      if (holders++ === 0) timer.ref();
    },
    let: () => {
      if (--holders === 0) timer.unref();
    },
  };
})();

interface PendingRun {
  readonly resolve: (result: RunResult) => void;
  readonly reject: (error: Error) => void;
}

type WorkerReply =
  | {
      readonly type: 'ready';
      readonly inputMetadata: SessionMetadata['inputMetadata'];
      readonly outputMetadata: SessionMetadata['outputMetadata'];
      readonly openMilliseconds: number;
    }
  | { readonly type: 'failed'; readonly message: string }
  | { readonly id: number; readonly outputs: Record<string, TensorPayload>; readonly micros: number }
  | { readonly id: number; readonly error: string };

/**
 * A session on a worker thread of its own (session-worker.mjs): the session is created
 * there and runs there, so neither blocks the event loop, and N such sessions run N
 * runs at once. Inputs cross by structured clone (one copy; buffers the backend made
 * for a batch are transferred instead), outputs are transferred back without a copy.
 * If the thread dies, pending runs fail with UNAVAILABLE and the loss is reported.
 */
export class WorkerSession implements OnnxSession {
  readonly thread = 'worker';
  private readonly pending = new Map<number, PendingRun>();
  private readonly lostListeners = new Set<(reason: string) => void>();
  private nextId = 0;
  /** Why runs are refused now: released, or what happened to the thread. */
  private ended: string | undefined;

  private constructor(
    private readonly worker: Worker,
    readonly metadata: SessionMetadata,
    readonly openMilliseconds: number,
    private readonly what: string,
  ) {
    worker.on('message', (reply: WorkerReply) => this.settle(reply));
    worker.on('messageerror', (error) => this.lose(`a reply from its worker thread could not be read: ${error.message}`));
    worker.on('error', (error) => this.lose(`its worker thread failed: ${error.message}`));
    worker.on('exit', (code) => this.lose(`its worker thread exited with code ${code}`));
    // An idle session must not keep the process alive; a pending run does (keepAlive).
    worker.unref();
  }

  /** Starts the thread and creates the session in it; rejects with onnxruntime's reason if it cannot. */
  static open(runtime: OrtRuntime, source: SessionSource, options: OrtSessionOptions, what: string, resourceLimits?: ResourceLimits): Promise<WorkerSession> {
    const worker = new Worker(WORKER_SCRIPT, {
      resourceLimits,
      workerData: { runtime: runtime.packageName, model: source.model, externalData: source.externalData, options, wasm: runtime.wasm },
    });
    return new Promise((resolve, reject) => {
      // Listeners stay attached (removing a worker's last 'message' listener stops its port); they act only until settled.
      let settled = false;
      const fail = (error: Error) => {
        if (settled) return;
        settled = true;
        void worker.terminate();
        reject(error);
      };
      // The thread dying is not the model's fault: UNAVAILABLE. onnxruntime refusing the model is classified by openSession.
      const died = (reason: string) => fail(new InferenceError('UNAVAILABLE', `${what}: the session's worker thread ${reason} while loading`));
      worker.once('error', (error) => died(`failed (${error.message})`));
      worker.once('exit', (code) => died(`exited with code ${code}`));
      worker.once('message', (reply: WorkerReply) => {
        if (!('type' in reply)) return died('sent an unexpected first message');
        if (reply.type === 'failed') return fail(new Error(reply.message));
        settled = true;
        const metadata = { inputMetadata: reply.inputMetadata, outputMetadata: reply.outputMetadata };
        resolve(new WorkerSession(worker, metadata, reply.openMilliseconds, what));
      });
    });
  }

  run(feeds: Record<string, TensorPayload>, fetches: readonly string[], transfer: readonly ArrayBuffer[] = []): Promise<RunResult> {
    if (this.ended) return Promise.reject(new InferenceError('UNAVAILABLE', `${this.what}: ${this.ended}`));
    const id = ++this.nextId;
    const handed = [...transfer];
    const sent: Record<string, TensorPayload> = {};
    for (const name in feeds) sent[name] = this.crossing(feeds[name]!, handed);
    return new Promise((resolve, reject) => {
      try {
        this.worker.postMessage({ id, feeds: sent, fetches }, handed);
      } catch (error) {
        reject(new InferenceError('INTERNAL', `${this.what}: the inputs could not be sent to the session's worker thread: ${(error as Error).message}`));
        return;
      }
      if (this.pending.size === 0) keepAlive.hold();
      this.pending.set(id, { resolve, reject });
    });
  }

  /**
   * A structured clone copies a view's whole buffer: a caller's view into a larger
   * buffer is cut out first (and that copy transferred), so only its own bytes cross.
   */
  private crossing(feed: TensorPayload, handed: ArrayBuffer[]): TensorPayload {
    const data = feed.data;
    if (!ArrayBuffer.isView(data) || !(data.buffer instanceof ArrayBuffer) || handed.includes(data.buffer)) return feed;
    if (data.byteOffset === 0 && data.byteLength === data.buffer.byteLength) return feed;
    const own = new Uint8Array(data.byteLength);
    own.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    handed.push(own.buffer);
    // By its typed-array class, not its constructor: a Node Buffer's would be the deprecated Buffer(arrayBuffer).
    const View = (globalThis as unknown as Record<string, new (buffer: ArrayBuffer) => ArrayBufferView>)[(data as Uint8Array)[Symbol.toStringTag]]!;
    return { ...feed, data: new View(own.buffer) };
  }

  async release(): Promise<void> {
    if (this.ended) return;
    this.ended = 'the session was released';
    this.lostListeners.clear();
    this.failPending(`${this.what}: ${this.ended}`);
    await this.worker.terminate();
  }

  onLost(listener: (reason: string) => void): () => void {
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  private settle(reply: WorkerReply): void {
    if (!('id' in reply)) return;
    const run = this.pending.get(reply.id);
    if (!run) return;
    this.pending.delete(reply.id);
    if (this.pending.size === 0) keepAlive.let();
    if ('error' in reply) run.reject(new Error(reply.error));
    else run.resolve({ outputs: reply.outputs, runMicroseconds: reply.micros });
  }

  private lose(reason: string): void {
    if (this.ended) return;
    this.ended = reason;
    void this.worker.terminate();
    this.failPending(`${this.what}: ${reason}`);
    for (const listener of this.lostListeners) listener(reason);
    this.lostListeners.clear();
  }

  private failPending(message: string): void {
    if (this.pending.size === 0) return;
    keepAlive.let();
    for (const run of this.pending.values()) run.reject(new InferenceError('UNAVAILABLE', message));
    this.pending.clear();
  }
}
