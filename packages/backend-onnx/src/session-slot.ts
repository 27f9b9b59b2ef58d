import { emitTritiumWarning, type InstanceHealth } from '@tritium/core/backend';
import type { InlineLane } from './inline-lane.js';
import type { OnnxSession, RunOutcome, RunResult, SessionThread, TensorPayload } from './onnx-session.js';
import { RunsUnderWay } from './runs-under-way.js';
import { WARMUP_RUNS, type ThreadChoice } from './thread-choice.js';

/** Opens a session on `thread`, with `intraOpThreads` in place of its configured ones when given. */
export type SessionOpener = (thread: SessionThread, intraOpThreads: number | undefined) => Promise<OnnxSession>;

/**
 * The session an instance runs on (or that several instances share), kept alive:
 * when its pool thread dies, the instances using it are reported recovering, a
 * replacement is opened and they are restored (or failed, if it cannot be opened);
 * when the model's ThreadChoice widens its sessions (or narrows them while runs overlap),
 * the slot reopens its own, and the old session is released when the runs already on it
 * end. Runs of the sizes the choice sends inline go to the model's inline lane instead,
 * once it is open (the long ones only when they serve every request the model has in
 * flight).
 */
export class SessionSlot {
  private current!: OnnxSession;
  /** The intra-op threads the choice gave when the current session was opened. */
  private width: number | undefined;
  private stopWatching: () => void = () => {};
  private runsOnCurrent = 0;
  /** A move or replacement under way; release() waits for it. */
  private opening: Promise<void> | undefined;
  /** Set when a move failed: this slot stays where it is rather than retry on every run. */
  private stayPut = false;
  private released = false;
  /** The measured runs under way on the current session: a session moved away from is released once they end. */
  private running!: RunsUnderWay;
  private readonly users: InstanceHealth[] = [];
  /** Where the last run went. */
  lastThread: SessionThread;

  constructor(
    first: OnnxSession,
    /** The choice's intra-op threads when `first` was opened. */
    firstWidth: number | undefined,
    private readonly open: SessionOpener,
    private readonly choice: ThreadChoice,
    /** Names the slot's model in warnings. */
    private readonly what: string,
    /** The server's count of the model's requests in flight (waiting or executing), which tells "auto" whether a run is the model's lone one. */
    private readonly requestsInFlight: () => number,
    /** The model's inline session for short runs, under "auto". */
    private readonly lane?: InlineLane,
  ) {
    this.install(first, firstWidth);
    this.lastThread = first.thread;
  }

  /** Registers an instance that runs on this slot, to hear of its health. */
  use(health: InstanceHealth): void {
    this.users.push(health);
  }

  /**
   * Runs `feeds` for an execution that serves `requests` of the model's requests (a
   * sequence batch's empty slots not counted). A run inline may have ended, and its
   * result come back as it is, by the time this returns; it throws its error then.
   */
  run(feeds: Record<string, TensorPayload>, fetches: readonly string[], requests: number): RunOutcome {
    // Settled where it will stay: nothing to measure and no move to wait for, so no bookkeeping per run.
    if (this.choice.requested !== 'auto') return this.current.run(feeds, fetches);
    // Alone: no other request of the model waits or runs. Runs under way alone would not
    // tell: a long run inline holds the loop until it ends, so the next one would always
    // find none under way, and callers that overlap would queue on the loop for good.
    return this.runAuto(feeds, fetches, this.requestsInFlight() <= requests);
  }

  /** A run under "auto": inline where the choice says so for its size (`alone`: it serves every request the model has in flight), else on the pool, measured. */
  private runAuto(feeds: Record<string, TensorPayload>, fetches: readonly string[], alone: boolean): RunOutcome {
    const inputBytes = bytesOf(feeds);
    if (this.lane?.ready && this.choice.runsInline(inputBytes, alone)) {
      const timed = this.choice.timesInline(inputBytes);
      if (!timed) {
        this.lastThread = 'inline';
        return this.lane.run(feeds, fetches);
      }
      // A size timed inline runs on the pool (whose measured runs have the lane reopened) until the lane has the threads to time it with.
      if (this.lane.atChosenWidth) {
        this.lastThread = 'inline';
        const timing = this.lane.run(feeds, fetches, true);
        const record = (result: RunResult) => {
          this.choice.recordInline(inputBytes, result.runMicroseconds);
          return result;
        };
        return timing instanceof Promise ? timing.then(record) : record(timing);
      }
    }
    this.lastThread = 'worker';
    this.choice.recordPoolRun(alone);
    const session = this.current;
    if (!this.choice.measures(inputBytes) && (this.choice.intraOpThreads === this.width || this.stayPut)) return session.run(feeds, fetches);
    return this.running.track(
      session.run(feeds, fetches).then((result) => {
        this.measure(session, result, inputBytes);
        return result;
      }),
    );
  }

  /**
   * Releases the session now. The server calls this once the instance's executions
   * have returned, or when one outlived the exit timeout: then this ends it where it
   * can (the pending run fails UNAVAILABLE; a pool thread left without sessions ends
   * once the run returns, and one still hosting other sessions finishes it, its answer
   * awaited by no one). A session still being opened is waited for and released too.
   */
  async release(): Promise<void> {
    this.released = true;
    this.stopWatching();
    await this.current.release();
    await this.opening;
  }

  private measure(session: OnnxSession, result: RunResult, inputBytes: number): void {
    if (session !== this.current) return;
    // A session's first runs pay for warming up; they would skew the choice.
    if (++this.runsOnCurrent > WARMUP_RUNS && result.runMicroseconds !== undefined && result.handoffMicroseconds !== undefined) {
      this.choice.record({ inputBytes, runMicroseconds: result.runMicroseconds, handoffMicroseconds: result.handoffMicroseconds });
    }
    this.lane?.follow();
    if (this.choice.intraOpThreads !== this.width && !this.opening && !this.stayPut && !this.released) this.track(() => this.move());
  }

  /** Opens a session as wide as the choice says, switches to it, and releases the old one once its runs end. */
  private async move(): Promise<void> {
    try {
      const width = this.choice.intraOpThreads;
      const next = await this.openChosen();
      if (this.released) return void (await next.release());
      const old = this.current;
      const runsOnOld = this.running;
      this.install(next, width);
      await runsOnOld.idle();
      await old.release();
    } catch (error) {
      // The old session keeps serving.
      this.stayPut = true;
      emitTritiumWarning('TRITIUM_W012', `${this.what}: could not reopen its session with ${this.choice.intraOpThreads} intra-op threads: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  /** Runs a move or replacement after any under way, so two never overlap; release() waits for the last. */
  private track(work: () => Promise<void>): void {
    const before = this.opening;
    const run = (async () => {
      await before;
      await work();
    })();
    this.opening = run;
    void run.finally(() => {
      if (this.opening === run) this.opening = undefined;
    });
  }

  private openChosen(): Promise<OnnxSession> {
    return this.open(this.choice.thread, this.choice.intraOpThreads);
  }

  private install(session: OnnxSession, width: number | undefined): void {
    this.stopWatching();
    this.current = session;
    this.width = width;
    this.runsOnCurrent = 0;
    this.running = new RunsUnderWay();
    this.stopWatching = session.onLost((reason) => this.track(() => this.replace(session, reason)));
  }

  private async replace(lost: OnnxSession, reason: string): Promise<void> {
    // A move that ran first may have installed another session already.
    if (this.released || lost !== this.current) return;
    for (const user of this.users) user.recovering(reason);
    try {
      const width = this.choice.intraOpThreads;
      const next = await this.openChosen();
      if (this.released) return void (await next.release());
      this.install(next, width);
      for (const user of this.users) user.restored();
    } catch (error) {
      const why = `${reason}, and a replacement could not be opened: ${error instanceof Error ? error.message : String(error)}`;
      for (const user of this.users) user.failed(why);
    }
  }
}

/** The bytes of a run's inputs (a string tensor counts its strings): what the choice tells sizes apart by. */
function bytesOf(feeds: Record<string, TensorPayload>): number {
  let bytes = 0;
  for (const name in feeds) {
    const data = feeds[name]!.data;
    bytes += 'byteLength' in data ? data.byteLength : data.length;
  }
  return bytes;
}
