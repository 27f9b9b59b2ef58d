import { invalidParameter, modelParameter } from '@tritium/core';
import type { ModelConfig } from '@tritium/core';
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
 * It decides once: later runs are not measured. `reason` says why, for the model's state.
 */
export class ThreadChoice {
  private readonly runs: number[] = [];
  private readonly handoffs: number[] = [];
  private longestOpen = 0;
  private decided: SessionThread | undefined;
  /** Why the model runs where it does, once decided; the rule while measuring. */
  reason: string;
  constructor(
    readonly requested: SessionThread | 'auto',
    /** Told the reason once "auto" decides. */
    private readonly onDecided: (reason: string) => void = () => {},
  ) {
    if (requested !== 'auto') this.decided = requested;
    this.reason =
      requested === 'auto'
        ? 'auto: on worker threads while its first runs are measured; inline if a run costs less than the handoff to a worker'
        : `${requested} sessions (parameter ${EXECUTION_THREAD_PARAMETER})`;
  }

  static fromConfig(config: ModelConfig, onDecided?: (reason: string) => void): ThreadChoice {
    const value = modelParameter(config, EXECUTION_THREAD_PARAMETER)?.toLowerCase();
    if (value === undefined || value === 'auto') return new ThreadChoice('auto', onDecided);
    if (value === 'worker' || value === 'inline') return new ThreadChoice(value, onDecided);
    throw invalidParameter(config, EXECUTION_THREAD_PARAMETER, value, '"auto", "worker" (on the execution pool\'s threads) or "inline" (on the event loop\'s thread)');
  }

  /** Where new sessions start: workers until "auto" has decided. */
  get thread(): SessionThread {
    return this.decided ?? 'worker';
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
    if (run >= handoff) this.decide('worker', `worker threads: a run costs more than the handoff (${measured})`);
    else if (run >= INLINE_MAX_MICROSECONDS) this.decide('worker', `worker threads: runs too long to hold the event loop (${measured})`);
    else if (this.longestOpen >= INLINE_OPEN_BELOW_MILLISECONDS) this.decide('worker', `worker threads: too slow to open again on the event loop (${measured})`);
    else this.decide('inline', `inline: a run costs less than the handoff to a worker (${measured})`);
  }

  private decide(thread: SessionThread, reason: string): void {
    this.decided = thread;
    this.reason = `auto, ${reason}`;
    this.onDecided(this.reason);
  }
}

function quantile(values: number[], q: number): number {
  return values.sort((a, b) => a - b)[Math.floor(values.length * q)]!;
}
