/**
 * Runs a repository sync every interval and on demand, never two at once (a slow
 * sync delays the next). The timer does not keep the Node process alive.
 */
export class RepositoryPoller {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly intervalMs: number,
    private readonly sync: () => Promise<void>,
  ) {}

  start(): void {
    this.schedule();
  }

  /** Runs a sync now (waiting for one in progress first); for tests and callers that changed the repository. */
  async pollNow(): Promise<void> {
    while (this.running) await this.running;
    if (!this.stopped) await this.track(this.sync());
  }

  /** No sync starts from now on; one under way runs on. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private track(run: Promise<void>): Promise<void> {
    this.running = run.finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.pollNow().then(() => this.schedule());
    }, this.intervalMs);
    this.timer.unref();
  }
}
