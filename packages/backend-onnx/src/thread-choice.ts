import { invalidParameter, parameter, type ConfigView } from './config.js';
import type { SessionThread } from './onnx-session.js';

/** The model parameter that places a model's sessions: "auto" (default), "worker" or "inline". */
export const EXECUTION_THREAD_PARAMETER = 'execution_thread';

/**
 * Median run time below which "auto" runs a model inline. A worker handoff costs one
 * postMessage round trip, some 10 to 80 µs here depending on load (bench/README.md);
 * a run shorter than about that would spend as much on the handoff as on the model,
 * and holding the event loop for under 100 µs is far inside the 1–2 ms loop-delay budget.
 * Measured in the worker, a run also includes onnxruntime-node's own setImmediate hop
 * (the tiny test model: 8 µs on the loop, 15–50 µs measured there), which the margin absorbs.
 */
export const INLINE_BELOW_MICROSECONDS = 100;

/** Runs of each session left out before measuring: the first ones pay for warming up (JIT, allocations). */
export const WARMUP_RUNS = 4;

/** Runs measured before "auto" decides. */
export const MEASURED_RUNS = 16;

/**
 * Where one model's sessions run. "worker" and "inline" are fixed; "auto" starts on
 * worker threads (so loading never blocks the event loop), measures the first runs,
 * and moves the model inline when their median is below INLINE_BELOW_MICROSECONDS.
 * It decides once: later runs are not measured.
 */
export class ThreadChoice {
  private readonly samples: number[] = [];
  private decided: SessionThread | undefined;

  constructor(readonly requested: SessionThread | 'auto') {
    if (requested !== 'auto') this.decided = requested;
  }

  static fromConfig(config: ConfigView): ThreadChoice {
    const value = parameter(config, EXECUTION_THREAD_PARAMETER)?.trim().toLowerCase();
    if (value === undefined || value === '' || value === 'auto') return new ThreadChoice('auto');
    if (value === 'worker' || value === 'inline') return new ThreadChoice(value);
    throw invalidParameter(config, EXECUTION_THREAD_PARAMETER, value, '"auto", "worker" (a worker thread per session) or "inline" (on the event loop\'s thread)');
  }

  /** Where new sessions start: workers until "auto" has decided. */
  get thread(): SessionThread {
    return this.decided ?? 'worker';
  }

  get isDecided(): boolean {
    return this.decided !== undefined;
  }

  /** Records one measured worker run (after a session's warm-up); returns true when this sample made the decision. */
  record(runMicroseconds: number): boolean {
    if (this.decided) return false;
    this.samples.push(runMicroseconds);
    if (this.samples.length < MEASURED_RUNS) return false;
    const sorted = this.samples.sort((a, b) => a - b);
    const median = sorted[sorted.length >> 1]!;
    this.decided = median < INLINE_BELOW_MICROSECONDS ? 'inline' : 'worker';
    return true;
  }
}
