import type { OnnxSession, RunResult, SessionMetadata, TensorPayload } from './onnx-session.js';
import type { HostedSession, PoolThread } from './pool-thread.js';

/**
 * A session hosted on a thread of the execution pool: a slot on a shared thread, not a
 * thread of its own, so a model costs its session's memory. The pool places a model's
 * sessions on different threads, so N instances run N runs at once while N threads are
 * free. A run whose thread is busy (another model's long run) goes to a sibling, a
 * session of the same model with the same options on a less busy thread: onnxruntime
 * sessions keep nothing between runs, so any of them gives the same answer.
 */
export class PoolSession implements OnnxSession {
  readonly thread = 'worker';
  private released = false;
  /** Runs of siblings' instances that this session serves now: its release waits for them. */
  private readonly lent = new Set<Promise<RunResult>>();

  constructor(
    readonly host: PoolThread,
    private readonly hosted: HostedSession,
    /** The model (and placement) the pool placed it for. */
    private readonly group: string,
    /** The group's open sessions, this one included. */
    private readonly siblings: Set<PoolSession>,
    /** Names the session's user in errors: "model 'm'". */
    private readonly what: string,
  ) {}

  get metadata(): SessionMetadata {
    return this.hosted.metadata;
  }

  run(feeds: Record<string, TensorPayload>, fetches: readonly string[]): Promise<RunResult> {
    let chosen: PoolSession = this;
    if (this.host.busy > 0) {
      for (const sibling of this.siblings) if (!sibling.host.ended && sibling.host.busy < chosen.host.busy) chosen = sibling;
    }
    const run = chosen.host.run(chosen.hosted.id, feeds, fetches, this.what);
    if (chosen !== this) {
      chosen.lent.add(run);
      const done = () => chosen.lent.delete(run);
      void run.then(done, done);
    }
    return run;
  }

  /**
   * Frees the session once the runs it serves for siblings end (their instances are still
   * serving); its own instance's pending runs fail UNAVAILABLE if this ends the thread.
   */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    this.siblings.delete(this);
    await Promise.allSettled([...this.lent]);
    this.host.release(this.hosted.id, this.group);
  }

  onLost(listener: (reason: string) => void): () => void {
    return this.host.onLost((reason) => {
      this.siblings.delete(this);
      listener(reason);
    });
  }
}
