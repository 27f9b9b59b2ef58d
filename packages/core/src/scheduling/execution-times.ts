import { performance } from 'node:perf_hooks';
import type { ExecutionReport } from '../contract/backend.js';
import { InferenceError } from '../errors.js';

/**
 * One execution's compute times as its backend reports them (ExecutionReport): Triton's
 * COMPUTE_INPUT_END and COMPUTE_OUTPUT_START between the execution's start and end. A
 * time the backend did not report is undefined, and its phase is counted as
 * compute_infer, as before backends reported any.
 */
export class ExecutionTimes implements ExecutionReport {
  private inputsReadyAt: number | undefined;
  private outputsStartedAt: number | undefined;

  constructor(readonly start: number) {}

  inputsReady(time?: number): void {
    this.inputsReadyAt = checkedTime('inputsReady', time);
  }

  outputsStarted(time?: number): void {
    this.outputsStartedAt = checkedTime('outputsStarted', time);
  }

  /** Whether the backend reported either time. */
  get reported(): boolean {
    return this.inputsReadyAt !== undefined || this.outputsStartedAt !== undefined;
  }

  /**
   * COMPUTE_INPUT_END for an execution that ended at `end`, held within it (a time taken
   * on another thread may stray by a few microseconds); undefined when not reported.
   */
  inputEnd(end: number): number | undefined {
    return this.inputsReadyAt === undefined ? undefined : within(this.inputsReadyAt, this.start, end);
  }

  /** COMPUTE_OUTPUT_START, no earlier than COMPUTE_INPUT_END; undefined when not reported. */
  outputStart(end: number): number | undefined {
    return this.outputsStartedAt === undefined ? undefined : within(this.outputsStartedAt, this.inputEnd(end) ?? this.start, end);
  }
}

function checkedTime(method: string, time: number | undefined): number {
  if (time === undefined) return performance.now();
  if (typeof time !== 'number' || !Number.isFinite(time)) {
    throw new InferenceError('INVALID_ARG', `ExecutionReport.${method}: the time must be a performance.now() number of milliseconds, got ${String(time)}`);
  }
  return time;
}

function within(time: number, from: number, to: number): number {
  return Math.min(Math.max(time, from), to);
}
