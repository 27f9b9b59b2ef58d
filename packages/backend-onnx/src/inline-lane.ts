import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { InferenceError } from '@tritium/core/backend';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BindingSession } from './binding-session.js';
import { turnIfDue } from './loop-turn.js';
import type { OnnxSession, RunOutcome, TensorPayload } from './onnx-session.js';
import { openSession, type SessionSpec } from './session.js';
import type { ThreadChoice } from './thread-choice.js';

/**
 * Largest optimized model "auto" opens on the event loop: reading and initialising
 * 16 MiB of weights holds the loop for some 10–40 ms, once; a larger model keeps every
 * run on the pool.
 */
export const INLINE_MODEL_MAX_BYTES = 16 * 2 ** 20;

/**
 * The inline session that "auto" runs a model's short runs on: one per model and
 * placement, which all its instances share (one thread runs them all anyway), opened
 * the first time the ThreadChoice sends a size of input inline, and opened again with
 * more intra-op threads when a size measured on widened sessions goes (or is timed) inline.
 *
 * onnxruntime-node opens a session synchronously, on the thread that asks, and its
 * graph optimizations can take tens of milliseconds (constant folding) where reading
 * the weights takes a few: so a pool thread opens the model first and saves the
 * optimized graph, and the event loop opens that file with optimizations off, through
 * onnxruntime-node's binding (BindingSession) where it can, which runs synchronously;
 * onnxruntime-web's lane is an inline session of its public API.
 */
export class InlineLane {
  private current: BindingSession | OnnxSession | undefined;
  /** The intra-op threads `current` was opened with. */
  private currentWidth: number | undefined;
  /** The intra-op threads `current` was, or the session being opened is being, opened with. */
  private width: number | undefined;
  private opening: Promise<void> | undefined;
  private released = false;

  constructor(
    /** The model's pooled sessions' spec: the same options, made inline. */
    private readonly spec: SessionSpec,
    private readonly choice: ThreadChoice,
  ) {}

  /** The session to run on, once open. */
  get ready(): boolean {
    return this.current !== undefined;
  }

  /** Whether the open session has the intra-op threads the choice wants now: runs the choice times must run on that one. */
  get atChosenWidth(): boolean {
    return this.current !== undefined && this.currentWidth === this.chosenWidth();
  }

  /**
   * Runs on the current session. A binding session's run ends before this returns (its
   * result comes back as it is, not as a promise, unless the loop must turn first), so a
   * session replaced by a wider one has no run left on it; only binding sessions are
   * replaced. `timed`: the result tells how long the run held the event loop (a binding
   * session's; the public API's runs are not timed, their own hop being part of them).
   */
  run(feeds: Record<string, TensorPayload>, fetches: readonly string[], timed = false): RunOutcome {
    const turn = turnIfDue();
    return turn ? turn.then(() => this.runNow(feeds, fetches, timed)) : this.runNow(feeds, fetches, timed);
  }

  private runNow(feeds: Record<string, TensorPayload>, fetches: readonly string[], timed: boolean): RunOutcome {
    const session = this.current;
    if (!session) throw new InferenceError('UNAVAILABLE', `model '${this.spec.modelName}': its inline session was released`);
    if (!timed || !(session instanceof BindingSession)) return session.run(feeds, fetches);
    const started = performance.now();
    const { outputs } = session.run(feeds, fetches);
    return { outputs, runMicroseconds: (performance.now() - started) * 1000 };
  }

  /** Opens (or reopens, wider) the session when the choice wants it; does nothing while an open is under way. */
  follow(): void {
    if (!this.choice.wantsInline || this.opening || this.released) return;
    const width = this.chosenWidth();
    // A session of the public API may have runs under way (its runs wait for a setImmediate): it stays as it is.
    if (this.current && (width === this.width || !(this.current instanceof BindingSession))) return;
    this.width = width;
    this.opening = this.open(width).finally(() => (this.opening = undefined));
  }

  async release(): Promise<void> {
    this.released = true;
    await this.opening;
    await this.current?.release();
    this.current = undefined;
  }

  private chosenWidth(): number | undefined {
    return this.choice.inlineIntraOpThreads ?? this.spec.options.intraOpNumThreads;
  }

  private async open(intraOpNumThreads: number | undefined): Promise<void> {
    try {
      const next = await (this.spec.runtime.kind === 'node' ? this.openPreoptimized(intraOpNumThreads) : openSession(this.spec, 'inline'));
      if (this.released) return void (await next.release());
      const old = this.current;
      this.current = next;
      this.currentWidth = intraOpNumThreads;
      await old?.release();
    } catch (error) {
      this.choice.refuseInline(error instanceof Error ? error.message : String(error));
    }
  }

  private async openPreoptimized(intraOpNumThreads: number | undefined): Promise<BindingSession | OnnxSession> {
    const directory = await mkdtemp(join(tmpdir(), 'tritium-inline-'));
    try {
      const optimized = join(directory, 'model.onnx');
      // A group of its own: this session must never stand in for the model's pooled ones.
      const saving = await openSession({ ...this.spec, options: { ...this.spec.options, optimizedModelFilePath: optimized }, group: `${this.spec.group}:optimizing` }, 'worker');
      await saving.release();
      const { size } = await stat(optimized);
      if (size > INLINE_MODEL_MAX_BYTES) {
        throw new Error(`its optimized model is ${(size / 2 ** 20).toFixed(0)} MiB, more than the ${INLINE_MODEL_MAX_BYTES / 2 ** 20} MiB opened on the event loop`);
      }
      const options = { ...this.spec.options, graphOptimizationLevel: 'disabled' as const, ...(intraOpNumThreads === undefined ? {} : { intraOpNumThreads }) };
      const openBinding = this.spec.runtime.openBindingSession;
      return openBinding ? openBinding(optimized, options) : await openSession({ ...this.spec, modelFile: optimized, options }, 'inline');
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  }
}
