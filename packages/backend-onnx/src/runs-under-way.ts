/**
 * Counts one session's runs under way, so that a session moved away from is released
 * once its runs have ended. A count, not a Set of runs: a long-lived Set with an add and
 * a delete per run keeps every run's objects alive through young-generation collections
 * (core's live-set.ts).
 */
export class RunsUnderWay {
  private count = 0;
  private waiters: Array<() => void> = [];
  private readonly ended = () => {
    if (--this.count > 0 || this.waiters.length === 0) return;
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  };

  /** Counts `run` until it settles, and returns it. */
  track<T>(run: Promise<T>): Promise<T> {
    this.count++;
    run.then(this.ended, this.ended);
    return run;
  }

  /** Resolves once no run is under way. */
  idle(): Promise<void> {
    if (this.count === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}
