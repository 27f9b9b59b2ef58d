import type { InstanceHealth } from '@tritium/core';
import type { OnnxSession, RunResult, SessionThread, TensorPayload } from './onnx-session.js';
import { WARMUP_RUNS, type ThreadChoice } from './thread-choice.js';

/**
 * The session an instance runs on (or that several instances share), kept alive:
 * when its worker thread dies, the instances using it are reported recovering, a
 * replacement is opened and they are restored (or failed, if it cannot be opened);
 * when the model's ThreadChoice moves the model inline, the slot moves at once, and
 * the old session is released when the runs already on it end.
 */
export class SessionSlot {
  private runsOnWorker = 0;
  private moving = false;
  private released = false;
  private readonly running = new Set<Promise<unknown>>();
  private readonly users: InstanceHealth[] = [];

  constructor(
    private current: OnnxSession,
    private readonly open: (thread: SessionThread) => Promise<OnnxSession>,
    private readonly choice: ThreadChoice,
    /** Names the slot's model in warnings. */
    private readonly what: string,
  ) {
    this.watch(current);
  }

  get thread(): SessionThread {
    return this.current.thread;
  }

  /** Registers an instance that runs on this slot, to hear of its health. */
  use(health: InstanceHealth): void {
    this.users.push(health);
  }

  run(feeds: Record<string, TensorPayload>, fetches: readonly string[], transfer?: readonly ArrayBuffer[]): Promise<RunResult> {
    const session = this.current;
    const run = session.run(feeds, fetches, transfer).then((result) => {
      this.measure(session, result);
      return result;
    });
    this.running.add(run);
    void run.then(
      () => this.running.delete(run),
      () => this.running.delete(run),
    );
    return run;
  }

  /**
   * Releases the session now. The server calls this once the instance's executions
   * have returned, or when one outlived the exit timeout: then this is what ends it
   * (a worker is terminated, its pending run fails UNAVAILABLE).
   */
  async release(): Promise<void> {
    this.released = true;
    await this.current.release();
  }

  private measure(session: OnnxSession, result: RunResult): void {
    if (session.thread === 'worker' && !this.choice.isDecided) {
      // A session's first runs pay for warming up; they would skew the choice.
      if (++this.runsOnWorker > WARMUP_RUNS) this.choice.record(result.runMicroseconds);
    }
    if (this.choice.thread !== this.current.thread && !this.moving && !this.released) void this.move();
  }

  /** Opens a session where the choice says, switches to it, and releases the old one once its runs end. */
  private async move(): Promise<void> {
    this.moving = true;
    try {
      const next = await this.open(this.choice.thread);
      if (this.released) return void (await next.release());
      const old = this.current;
      this.current = next;
      this.watch(next);
      await Promise.allSettled([...this.running]);
      await old.release();
    } catch (error) {
      // The old session keeps serving.
      process.emitWarning(`${this.what}: could not move its session ${this.choice.thread}: ${error instanceof Error ? error.message : String(error)}`, 'TritiumWarning');
    } finally {
      this.moving = false;
    }
  }

  private watch(session: OnnxSession): void {
    session.onLost((reason) => void this.replace(reason));
  }

  private async replace(reason: string): Promise<void> {
    if (this.released) return;
    for (const user of this.users) user.recovering(reason);
    try {
      const next = await this.open(this.choice.thread);
      if (this.released) return void (await next.release());
      this.current = next;
      this.watch(next);
      for (const user of this.users) user.restored();
    } catch (error) {
      const why = `${reason}, and a replacement could not be opened: ${error instanceof Error ? error.message : String(error)}`;
      for (const user of this.users) user.failed(why);
    }
  }
}
