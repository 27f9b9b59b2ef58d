/**
 * Runs a repository sync every interval and on demand, never two at once (a slow
 * sync delays the next). A sync that fails is reported once until one succeeds again,
 * not at every interval. The timer does not keep the Node process alive.
 */
export class RepositoryPoller {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private failing = false;

  constructor(
    private readonly intervalMs: number,
    private readonly sync: () => Promise<void>,
    private readonly onFailure: (error: unknown) => void,
  ) {}

  start(): void {
    this.schedule();
  }

  /** Runs a sync now (waiting for one in progress first); for tests and callers that changed the repository. */
  async pollNow(): Promise<void> {
    while (this.running) await this.running;
    if (!this.stopped) await this.track(this.syncOnce());
  }

  /** No sync starts from now on; one under way runs on. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async syncOnce(): Promise<void> {
    try {
      await this.sync();
      this.failing = false;
    } catch (error) {
      // After stop() a sync under way may fail on what the caller tore down: not worth a report.
      if (!this.failing && !this.stopped) this.onFailure(error);
      this.failing = true;
    }
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
