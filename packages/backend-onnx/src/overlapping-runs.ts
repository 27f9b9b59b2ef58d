/** Pooled runs per window over which the share of overlapping runs is judged. */
export const OVERLAP_WINDOW_RUNS = 16;

/** Windows in a row that must disagree with the current width before it changes; doubled after each change. */
export const WINDOWS_TO_CHANGE_WIDTH = 3;
const MAX_WIDTH_CHANGE_BACKOFF = 4;

/**
 * Whether a widened model's pooled runs mostly overlap one another. Widened sessions let
 * one lone run use every core; when two instances' runs overlap, their intra-op threads
 * contend for the same cores instead (8 callers of the MLP at batch 64 on 2 cores: 830–1080
 * req/s on two-thread sessions, 1150–1510 on one-thread ones), so the sessions are better
 * narrow then. Judged per window of OVERLAP_WINDOW_RUNS runs, a run overlapping when it
 * does not serve every request the model has in flight; the width changes only after
 * WINDOWS_TO_CHANGE_WIDTH windows in a row ask for it, twice as many after each change,
 * since every change reopens the model's sessions.
 */
export class OverlappingRuns {
  private runs = 0;
  private overlapping = 0;
  private windowsAgainst = 0;
  private changes = 0;
  /** Whether the runs overlap, so that the sessions should be narrow. */
  narrow = false;

  /** Records one pooled run; returns whether this changed `narrow`. */
  record(alone: boolean): boolean {
    this.runs++;
    if (!alone) this.overlapping++;
    if (this.runs < OVERLAP_WINDOW_RUNS) return false;
    const overlap = this.overlapping * 2 > this.runs;
    this.runs = 0;
    this.overlapping = 0;
    this.windowsAgainst = overlap === this.narrow ? 0 : this.windowsAgainst + 1;
    if (this.windowsAgainst < WINDOWS_TO_CHANGE_WIDTH * 2 ** Math.min(this.changes, MAX_WIDTH_CHANGE_BACKOFF)) return false;
    this.narrow = overlap;
    this.windowsAgainst = 0;
    this.changes++;
    return true;
  }
}
