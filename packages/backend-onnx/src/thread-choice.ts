import { invalidParameter, modelParameter } from '@tritium/core/backend';
import type { ModelConfig } from '@tritium/core/backend';
import type { SessionThread } from './onnx-session.js';

/** The model parameter that places a model's sessions: "auto" (default), "worker" or "inline". */
export const EXECUTION_THREAD_PARAMETER = 'execution_thread';

/**
 * Longest median run "auto" ever puts on the event loop, however slow the handoff
 * measures: far inside the 1–2 ms loop-delay budget, so a loaded loop (where a
 * handoff can measure hundreds of µs) never moves a millisecond model onto itself.
 */
export const INLINE_MAX_MICROSECONDS = 250;

/**
 * Longest session open (the model's own, onnxruntime's process start-up left out) that
 * "auto" still repeats on the event loop when it moves a model inline: a model with
 * fast runs but large weights stays on workers rather than freeze the loop loading again.
 */
export const INLINE_OPEN_BELOW_MILLISECONDS = 20;

/**
 * Shortest run (lower quartile, on one intra-op thread) for which "auto" gives a pooled
 * model's sessions the machine's cores as intra-op threads: long enough that onnxruntime
 * splits its operators and a woken thread's ~10 µs is small beside the run. A lone
 * request then uses every core, as raw onnxruntime-node's default does (an MLP's
 * batch-64 run takes half the time); shorter runs keep one thread, so many small models
 * add no threads.
 */
export const WIDE_FROM_MICROSECONDS = 100;

/** Runs of each session left out before measuring: the first ones pay for warming up (JIT, allocations). */
export const WARMUP_RUNS = 4;

/** Runs measured before "auto" decides. */
export const MEASURED_RUNS = 16;

/** One measured worker run: the model's own time in onnxruntime, and what the handoff added. */
export interface RunSample {
  readonly runMicroseconds: number;
  readonly handoffMicroseconds: number;
}

/**
 * Where one model's sessions run. "worker" and "inline" are fixed; "auto" starts on
 * worker threads (so loading never blocks the event loop), measures the first runs,
 * and moves the model inline when a run costs less than handing it to a worker, both
 * measured in this process: the run's lower quartile (inside onnxruntime, without its
 * setImmediate hop; its own cost, which a busy machine's preemption and a woken thread's
 * cold caches only add to) under the median handoff (the round trip less the run, what
 * each run pays on a worker) and under INLINE_MAX_MICROSECONDS, and its sessions opened
 * within INLINE_OPEN_BELOW_MILLISECONDS.
 * A model that stays on workers with runs of WIDE_FROM_MICROSECONDS or more gets the
 * cores as intra-op threads (`widenTo`), its sessions reopened so.
 * It decides once: later runs are not measured. `reason` says why, for the model's state.
 */
export class ThreadChoice {
  private readonly runs: number[] = [];
  private readonly handoffs: number[] = [];
  private longestOpen = 0;
  private decided: SessionThread | undefined;
  /**
   * Where new sessions open, as one comparable value: "inline", "worker", or "worker×N"
   * once widened to N intra-op threads. Kept, not derived: a slot compares it on every run.
   */
  place: string;
  /** Intra-op threads that pooled sessions get once "auto" finds their runs long enough; undefined: they keep the ones they opened with. */
  private wideThreads: number | undefined;
  /** Why the model runs where it does, once decided; the rule while measuring. */
  reason: string;
  constructor(
    readonly requested: SessionThread | 'auto',
    /** Told the reason once "auto" decides. */
    private readonly onDecided: (reason: string) => void = () => {},
    /** Intra-op threads a pooled session may widen to: the cores, or undefined where the config sets its own count or the pool already gives each session the cores. */
    private readonly widenTo?: number,
  ) {
    if (requested !== 'auto') this.decided = requested;
    this.place = this.thread;
    this.reason =
      requested === 'auto'
        ? 'auto: on worker threads while its first runs are measured; inline if a run costs less than the handoff to a worker'
        : `${requested} sessions (parameter ${EXECUTION_THREAD_PARAMETER})`;
  }

  static fromConfig(config: ModelConfig, onDecided?: (reason: string) => void, widenTo?: number): ThreadChoice {
    const value = modelParameter(config, EXECUTION_THREAD_PARAMETER)?.toLowerCase();
    if (value === undefined || value === 'auto') return new ThreadChoice('auto', onDecided, widenTo);
    if (value === 'worker' || value === 'inline') return new ThreadChoice(value, onDecided);
    throw invalidParameter(config, EXECUTION_THREAD_PARAMETER, value, '"auto", "worker" (on the execution pool\'s threads) or "inline" (on the event loop\'s thread)');
  }

  /** Where new sessions start: workers until "auto" has decided. */
  get thread(): SessionThread {
    return this.decided ?? 'worker';
  }

  /** The intra-op threads the choice gives pooled sessions, when it widened them (only ever on workers). */
  get intraOpThreads(): number | undefined {
    return this.wideThreads;
  }

  get isDecided(): boolean {
    return this.decided !== undefined;
  }

  /** Notes how long a worker session took to open. */
  noteOpen(milliseconds: number): void {
    this.longestOpen = Math.max(this.longestOpen, milliseconds);
  }

  /** Records one measured worker run (after a session's warm-up); decides once enough are in. */
  record(sample: RunSample): void {
    if (this.decided) return;
    this.runs.push(sample.runMicroseconds);
    this.handoffs.push(sample.handoffMicroseconds);
    if (this.runs.length < MEASURED_RUNS) return;
    const run = quantile(this.runs, 0.25);
    const handoff = quantile(this.handoffs, 0.5);
    const measured = `run ${run.toFixed(0)} µs in onnxruntime (lower quartile), handoff to a worker ${handoff.toFixed(0)} µs (median), open ${this.longestOpen.toFixed(1)} ms`;
    if (run >= handoff) this.decideWorker(run, `a run costs more than the handoff (${measured})`);
    else if (run >= INLINE_MAX_MICROSECONDS) this.decideWorker(run, `runs too long to hold the event loop (${measured})`);
    else if (this.longestOpen >= INLINE_OPEN_BELOW_MILLISECONDS) this.decideWorker(run, `too slow to open again on the event loop (${measured})`);
    else this.decide('inline', `inline: a run costs less than the handoff to a worker (${measured})`);
  }

  private decideWorker(run: number, why: string): void {
    if (this.widenTo !== undefined && run >= WIDE_FROM_MICROSECONDS) {
      this.wideThreads = this.widenTo;
      this.decide('worker', `worker threads with ${this.widenTo} intra-op threads per session, runs long enough to split: ${why}`);
    } else {
      this.decide('worker', `worker threads: ${why}`);
    }
  }

  private decide(thread: SessionThread, reason: string): void {
    this.decided = thread;
    this.place = this.wideThreads === undefined ? thread : `${thread}×${this.wideThreads}`;
    this.reason = `auto, ${reason}`;
    this.onDecided(this.reason);
  }
}

function quantile(values: number[], q: number): number {
  return values.sort((a, b) => a - b)[Math.floor(values.length * q)]!;
}
