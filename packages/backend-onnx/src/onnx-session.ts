import type { OrtSession } from './runtime.js';

/** A tensor as it crosses to a session: onnxruntime's element type name, data and dims. */
export interface TensorPayload {
  readonly type: string;
  readonly data: ArrayBufferView | readonly string[];
  readonly dims: readonly number[];
}

export interface RunResult {
  readonly outputs: Record<string, TensorPayload>;
  /** How long onnxruntime's run took, without any handoff: what the thread choice measures (pool runs, and inline runs it asks to time). */
  readonly runMicroseconds?: number;
  /** What the run cost beyond that on a pool thread: the round trip less the run. */
  readonly handoffMicroseconds?: number;
  /** When onnxruntime's run began and ended on its pool thread, as `performance.now()` of this thread (pool runs only). */
  readonly ranFrom?: number;
  readonly ranTo?: number;
}

/** A run's result, or its promise: a run on the event loop's thread (the inline lane) may have ended by the time it returns. */
export type RunOutcome = RunResult | Promise<RunResult>;

/** What a session tells of the model's inputs and outputs. */
export type SessionMetadata = Pick<OrtSession, 'inputMetadata' | 'outputMetadata'>;

/** Where a session's runs happen: a worker thread of the execution pool, or the thread that calls infer(). */
export type SessionThread = 'worker' | 'inline';

/** One onnxruntime session, wherever it runs. */
export interface OnnxSession {
  readonly thread: SessionThread;
  readonly metadata: SessionMetadata;
  run(feeds: Record<string, TensorPayload>, fetches: readonly string[]): Promise<RunResult>;
  /** Frees the session (a pool thread with no session left ends, giving its memory back). Later calls do nothing. */
  release(): Promise<void>;
  /** Calls `listener` once if the session dies on its own (its pool thread stopped); returns the unsubscribe. */
  onLost(listener: (reason: string) => void): () => void;
}
