import { Worker, type ResourceLimits } from 'node:worker_threads';
import { InferenceError } from '@tritium/core/backend';
import type { RunResult, SessionMetadata, TensorPayload } from './onnx-session.js';
import type { OrtRuntime, OrtSessionOptions, SessionSource } from './runtime.js';
import { SHARED_FROM_BYTES, sharedBuffers } from './shared-buffers.js';

const THREAD_SCRIPT = new URL('./pool-thread.mjs', import.meta.url);

/**
 * Keeps the process alive while any run or open is pending, and only then: idle threads
 * are unref'd. A timer's ref()/unref() is a flag, where a Worker's costs some 60 µs a call.
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

/** A feed as it crosses: as given (cloned), cut out of a larger buffer (transferred), or copied into a shared buffer. */
type Crossing = TensorPayload | { readonly type: string; readonly dims: readonly number[]; readonly shared: SharedArrayBuffer; readonly byteLength: number; readonly view: string };

interface Pending {
  readonly id: number;
  /** Shared buffers holding the run's inputs, given back to the pool with the answer. */
  readonly shared: readonly SharedArrayBuffer[];
  /** Names the session's user in errors: "model 'm'". */
  readonly what: string;
  readonly resolve: (reply: Reply) => void;
  readonly reject: (error: Error) => void;
}

type Reply =
  | { readonly id: number; readonly metadata: SessionMetadata }
  | { readonly id: number; readonly outputs: Record<string, TensorPayload>; readonly micros: number; readonly ranFrom: number; readonly ranTo: number }
  | { readonly id: number; readonly error: string };

/** A session as the thread opened it. */
export interface HostedSession {
  readonly id: number;
  readonly metadata: SessionMetadata;
}

/**
 * One thread of the execution pool (pool-thread.mjs): it hosts the sessions of any
 * models and runs their runs one at a time. A caller's input crosses through a pooled
 * SharedArrayBuffer from SHARED_FROM_BYTES up, by structured clone below (a view into a
 * larger buffer cut out first, and that copy transferred); outputs come back
 * transferred, without a copy. If the thread dies, pending
 * runs fail with UNAVAILABLE and every session on it is reported lost; the pool starts
 * another thread for their replacements.
 */
export class PoolThread {
  private readonly worker: Worker;
  /**
   * Operations sent and not yet answered, oldest first (the thread answers in order). An
   * array, not a Map by id: a long-lived Map with a delete per run keeps every run's
   * objects alive through young-generation collections (core's live-set.ts).
   */
  private readonly pending: Pending[] = [];
  private readonly lostListeners = new Set<(reason: string) => void>();
  /** Sessions hosted, by the group (model) that asked, for placing a model's sessions apart. */
  private readonly groups = new Map<string, number>();
  private readonly buffers = sharedBuffers();
  private nextId = 0;
  /** Why the thread takes no more work: ended when empty, or what happened to it. */
  ended: string | undefined;
  /** Sessions hosted now. */
  size = 0;
  /** Why the thread died on its own, if it did (not set when it ended with its last session). */
  private lost: string | undefined;

  constructor(
    resourceLimits: ResourceLimits | undefined,
    /** The thread's nice value on Linux, which the intra-op threads of its sessions inherit; undefined leaves the process's. */
    priority: number | undefined,
    /** Told once when the thread takes no more work: emptied or dead. */
    private readonly onEnded: () => void,
  ) {
    this.worker = new Worker(THREAD_SCRIPT, { resourceLimits, workerData: { priority } });
    this.worker.on('message', (reply: Reply) => this.settle(reply));
    this.worker.on('messageerror', (error) => this.lose(`a reply from its worker thread could not be read: ${error.message}`));
    this.worker.on('error', (error) => this.lose(`its worker thread failed: ${error.message}`));
    this.worker.on('exit', (code) => this.lose(`its worker thread exited with code ${code}`));
    // An idle thread must not keep the process alive; a pending operation does (keepAlive).
    this.worker.unref();
  }

  /** Operations sent and not yet answered: runs waiting or running here. */
  get busy(): number {
    return this.pending.length;
  }

  /** How many sessions of `group` this thread hosts. */
  hosts(group: string): number {
    return this.groups.get(group) ?? 0;
  }

  /** Opens a session of `group` here; rejects with onnxruntime's reason if it cannot. */
  async open(runtime: OrtRuntime, source: SessionSource, options: OrtSessionOptions, what: string, group: string): Promise<HostedSession> {
    this.count(group, +1);
    try {
      const message = { op: 'open', runtime: runtime.packageName, model: source.model, externalData: source.externalData, options, wasm: runtime.wasm };
      const reply = (await this.send(message, what)) as Extract<Reply, { metadata: SessionMetadata }>;
      return { id: reply.id, metadata: reply.metadata };
    } catch (error) {
      this.leave(group);
      throw error;
    }
  }

  async run(session: number, feeds: Record<string, TensorPayload>, fetches: readonly string[], what: string): Promise<RunResult> {
    const handed: ArrayBuffer[] = [];
    const shared: SharedArrayBuffer[] = [];
    const sent: Record<string, Crossing> = {};
    for (const name in feeds) sent[name] = this.crossing(feeds[name]!, handed, shared);
    const start = performance.now();
    const reply = (await this.send({ op: 'run', session, feeds: sent, fetches }, what, handed, shared)) as Extract<Reply, { outputs: unknown }>;
    return {
      outputs: reply.outputs,
      runMicroseconds: reply.micros,
      handoffMicroseconds: (performance.now() - start) * 1000 - reply.micros,
      // The thread's epoch times on this thread's clock.
      ranFrom: reply.ranFrom - performance.timeOrigin,
      ranTo: reply.ranTo - performance.timeOrigin,
    };
  }

  /** Frees a session. */
  release(session: number, group: string): void {
    this.leave(group, session);
  }

  /**
   * Calls `listener` once if the thread dies on its own; returns the unsubscribe. A thread
   * that died already (before a session kept aside, such as a model's first, was taken
   * up) tells it on the next turn, so the session is replaced rather than kept dead.
   */
  onLost(listener: (reason: string) => void): () => void {
    if (this.lost !== undefined) {
      const reason = this.lost;
      let wanted = true;
      queueMicrotask(() => {
        if (wanted) listener(reason);
      });
      return () => {
        wanted = false;
      };
    }
    this.lostListeners.add(listener);
    return () => this.lostListeners.delete(listener);
  }

  /**
   * How a feed crosses. An array from SHARED_FROM_BYTES up is copied into a pooled
   * shared buffer; a smaller one is cloned, but a structured clone copies a view's whole
   * buffer, so a view into a larger one is cut out first (and that copy transferred).
   */
  private crossing(feed: TensorPayload, handed: ArrayBuffer[], shared: SharedArrayBuffer[]): Crossing {
    const data = feed.data;
    if (!ArrayBuffer.isView(data)) return feed;
    // By its typed-array class, not its constructor: a Node Buffer's would be the deprecated Buffer(arrayBuffer).
    const view = (data as Uint8Array)[Symbol.toStringTag];
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    if (data.byteLength >= SHARED_FROM_BYTES) {
      const buffer = this.buffers.take(data.byteLength);
      new Uint8Array(buffer).set(bytes);
      shared.push(buffer);
      return { type: feed.type, dims: feed.dims, shared: buffer, byteLength: data.byteLength, view };
    }
    if (!(data.buffer instanceof ArrayBuffer) || (data.byteOffset === 0 && data.byteLength === data.buffer.byteLength)) return feed;
    const own = bytes.slice();
    handed.push(own.buffer);
    const View = (globalThis as unknown as Record<string, new (buffer: ArrayBuffer) => ArrayBufferView>)[view]!;
    return { ...feed, data: new View(own.buffer) };
  }

  /** A session (opened, or failed to open) leaves; the thread ends with its last one, giving its memory back. */
  private leave(group: string, session?: number): void {
    if (this.ended) return;
    this.count(group, -1);
    if (this.size > 0) {
      if (session !== undefined) this.worker.postMessage({ op: 'release', session });
      return;
    }
    // A run still pending (an execution that outlived the exit timeout) fails UNAVAILABLE.
    this.end('the session was released');
  }

  private count(group: string, by: number): void {
    this.size += by;
    const left = this.hosts(group) + by;
    if (left > 0) this.groups.set(group, left);
    else this.groups.delete(group);
  }

  private send(message: object, what: string, transfer: readonly ArrayBuffer[] = [], shared: readonly SharedArrayBuffer[] = []): Promise<Reply> {
    if (this.ended) return Promise.reject(new InferenceError('UNAVAILABLE', `${what}: ${this.ended}`));
    const id = ++this.nextId;
    return new Promise((resolve, reject) => {
      try {
        this.worker.postMessage({ ...message, id }, transfer);
      } catch (error) {
        reject(new InferenceError('INTERNAL', `${what}: the inputs could not be sent to the session's worker thread: ${(error as Error).message}`));
        return;
      }
      if (this.pending.length === 0) keepAlive.hold();
      this.pending.push({ id, shared, what, resolve, reject });
    });
  }

  private settle(reply: Reply): void {
    let at = 0;
    while (at < this.pending.length && this.pending[at]!.id !== reply.id) at++;
    if (at === this.pending.length) return;
    const pending = this.pending[at]!;
    this.pending.splice(at, 1);
    // The thread has copied the inputs out before it answers.
    for (const buffer of pending.shared) this.buffers.give(buffer);
    if (this.pending.length === 0) keepAlive.let();
    if ('error' in reply) pending.reject(new Error(reply.error));
    else pending.resolve(reply);
  }

  private lose(reason: string): void {
    if (this.ended) return;
    this.lost = reason;
    this.end(reason);
    for (const listener of this.lostListeners) listener(reason);
    this.lostListeners.clear();
  }

  private end(reason: string): void {
    this.ended = reason;
    this.onEnded();
    // Not terminate(): a thread stopped inside a native run aborts the process (pool-thread.mjs). It
    // ends itself once its run under way returns, and holds the process until then.
    this.worker.ref();
    this.worker.postMessage({ op: 'exit' });
    if (this.pending.length > 0) keepAlive.let();
    for (const pending of this.pending.splice(0)) pending.reject(new InferenceError('UNAVAILABLE', `${pending.what}: ${reason}`));
  }
}
