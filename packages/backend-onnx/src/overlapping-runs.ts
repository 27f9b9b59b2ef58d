/** How overlap is judged: the same windows, and patience between changes, as the rest of the thread choice. */
export interface OverlapWindows {
  /** Pooled runs per window over which the share of overlapping runs is judged. */
  readonly runs: number;
  /** Windows in a row that must disagree with the current width before it changes; doubled after each change. */
  readonly toChange: number;
  /** At most 2^maxBackoff times `toChange`. */
  readonly maxBackoff: number;
}

/**
 * Whether a widened model's pooled runs mostly overlap one another. Widened sessions let
 * one lone run use every core; when two instances' runs overlap, their intra-op threads
 * contend for the same cores instead (8 callers of the MLP at batch 64 on 2 cores: 830–1080
 * req/s on two-thread sessions, 1150–1510 on one-thread ones), so the sessions are better
 * narrow then. Judged per window of runs, a run overlapping when it does not serve every
 * request the model has in flight; the width changes only after windows in a row ask for
 * it, twice as many after each change, since every change reopens the model's sessions.
 */
export class OverlappingRuns {
  private runs = 0;
  private overlapping = 0;
  private windowsAgainst = 0;
  private changes = 0;
  /** Whether the runs overlap, so that the sessions should be narrow. */
  narrow = false;

  constructor(private readonly windows: OverlapWindows) {}

  /** Records one pooled run; returns whether this changed `narrow`. */
  record(alone: boolean): boolean {
    this.runs++;
    if (!alone) this.overlapping++;
    if (this.runs < this.windows.runs) return false;
    const overlap = this.overlapping * 2 > this.runs;
    this.runs = 0;
    this.overlapping = 0;
    this.windowsAgainst = overlap === this.narrow ? 0 : this.windowsAgainst + 1;
    if (this.windowsAgainst < this.windows.toChange * 2 ** Math.min(this.changes, this.windows.maxBackoff)) return false;
    this.narrow = overlap;
    this.windowsAgainst = 0;
    this.changes++;
    return true;
  }
}
