/**
 * Counts one model's runs under way, over all its sessions (pooled and inline): "auto"
 * gives a long run the event loop and every core only when it is the model's lone run.
 * Runs that overlap go to the pool's threads, which run them side by side and keep the
 * loop free, where on the loop they would queue behind each other and hold it.
 */
export class RunsUnderWay {
  private count = 0;
  private readonly ended = () => {
    this.count--;
  };

  /** Whether no run of the model is under way now. */
  get none(): boolean {
    return this.count === 0;
  }

  /** Counts `run` until it settles, and returns it. */
  track<T>(run: Promise<T>): Promise<T> {
    this.count++;
    run.then(this.ended, this.ended);
    return run;
  }
}
