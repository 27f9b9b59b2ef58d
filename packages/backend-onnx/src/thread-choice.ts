import { invalidParameter, modelParameter } from '@tritium/core';
import type { ModelConfig } from '@tritium/core';
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

/**
 * Longest session open (in the worker) that "auto" still repeats on the event loop when
 * it moves a model inline: a model with fast runs but large weights stays on workers
 * rather than freeze the loop while it loads there again.
 */
export const INLINE_OPEN_BELOW_MILLISECONDS = 20;

/** Runs of each session left out before measuring: the first ones pay for warming up (JIT, allocations). */
export const WARMUP_RUNS = 4;

/** Runs measured before "auto" decides. */
export const MEASURED_RUNS = 16;

/**
 * Where one model's sessions run. "worker" and "inline" are fixed; "auto" starts on
 * worker threads (so loading never blocks the event loop), measures the first runs,
 * and moves the model inline when their median is below INLINE_BELOW_MICROSECONDS and
 * its sessions opened within INLINE_OPEN_BELOW_MILLISECONDS. It decides once: later
 * runs are not measured.
 */
export class ThreadChoice {
  private readonly samples: number[] = [];
  private longestOpen = 0;
  private decided: SessionThread | undefined;

  constructor(readonly requested: SessionThread | 'auto') {
    if (requested !== 'auto') this.decided = requested;
  }

  static fromConfig(config: ModelConfig): ThreadChoice {
    const value = modelParameter(config, EXECUTION_THREAD_PARAMETER)?.toLowerCase();
    if (value === undefined || value === 'auto') return new ThreadChoice('auto');
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

  /** Notes how long a worker session took to open. */
  noteOpen(milliseconds: number): void {
    this.longestOpen = Math.max(this.longestOpen, milliseconds);
  }

  /** Records one measured worker run (after a session's warm-up); decides once enough are in. */
  record(runMicroseconds: number): void {
    if (this.decided) return;
    this.samples.push(runMicroseconds);
    if (this.samples.length < MEASURED_RUNS) return;
    const sorted = this.samples.sort((a, b) => a - b);
    const median = sorted[sorted.length >> 1]!;
    this.decided = median < INLINE_BELOW_MICROSECONDS && this.longestOpen < INLINE_OPEN_BELOW_MILLISECONDS ? 'inline' : 'worker';
  }
}
