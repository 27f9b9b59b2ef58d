import { Worker, type ResourceLimits } from 'node:worker_threads';
import { InferenceError } from '@tritium/core';
import type { OnnxSession, RunResult, SessionMetadata, TensorPayload } from './onnx-session.js';
import type { OrtRuntime, OrtSessionOptions, SessionSource } from './runtime.js';

const WORKER_SCRIPT = new URL('./session-worker.mjs', import.meta.url);

interface PendingRun {
  readonly resolve: (result: RunResult) => void;
  readonly reject: (error: Error) => void;
}

type WorkerReply =
  | { readonly type: 'ready'; readonly inputMetadata: SessionMetadata['inputMetadata']; readonly outputMetadata: SessionMetadata['outputMetadata'] }
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
  private released = false;

  private constructor(
    private readonly worker: Worker,
    readonly metadata: SessionMetadata,
    private readonly what: string,
  ) {
    worker.on('message', (reply: WorkerReply) => this.settle(reply));
    worker.on('error', (error) => this.lose(`its worker thread failed: ${error.message}`));
    worker.on('exit', (code) => this.lose(`its worker thread exited with code ${code}`));
    // An idle session must not keep the process alive; a pending run does (see run()).
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
      worker.once('error', fail);
      worker.once('exit', (code) => fail(new Error(`the session's worker thread exited with code ${code} while loading`)));
      worker.once('message', (reply: WorkerReply) => {
        if (!('type' in reply)) return fail(new Error(`unexpected first message from the session's worker thread`));
        if (reply.type === 'failed') return fail(new Error(reply.message));
        settled = true;
        resolve(new WorkerSession(worker, { inputMetadata: reply.inputMetadata, outputMetadata: reply.outputMetadata }, what));
      });
    });
  }

  run(feeds: Record<string, TensorPayload>, fetches: readonly string[], transfer: readonly ArrayBuffer[] = []): Promise<RunResult> {
    if (this.released) return Promise.reject(new InferenceError('UNAVAILABLE', `${this.what}: the session was released`));
    const id = ++this.nextId;
    const handed = [...transfer];
    const sent: Record<string, TensorPayload> = {};
    for (const name in feeds) sent[name] = this.crossing(feeds[name]!, handed);
    return new Promise((resolve, reject) => {
      if (this.pending.size === 0) this.worker.ref();
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, feeds: sent, fetches }, handed);
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
    const View = data.constructor as new (buffer: ArrayBuffer) => ArrayBufferView;
    return { ...feed, data: new View(own.buffer) };
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.lostListeners.clear();
    this.failPending(`${this.what}: the session was released`);
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
    if (this.pending.size === 0) this.worker.unref();
    if ('error' in reply) run.reject(new Error(reply.error));
    else run.resolve({ outputs: reply.outputs, runMicroseconds: reply.micros });
  }

  private lose(reason: string): void {
    if (this.released) return;
    this.released = true;
    this.failPending(`${this.what}: ${reason}`);
    for (const listener of this.lostListeners) listener(reason);
    this.lostListeners.clear();
  }

  private failPending(message: string): void {
    for (const run of this.pending.values()) run.reject(new InferenceError('UNAVAILABLE', message));
    this.pending.clear();
  }
}
