import type { CallerTrace } from './caller-trace.js';

/**
 * A tracer's work that waits for a request's caller to end (a frontend stamps its send
 * activities after the response), each run once: when its caller ends, or when the
 * tracer goes off and flushes what is still waiting.
 */
export class CallerWaits {
  private readonly waiting = new Set<() => void>();

  /** Runs `work` once `trace` has ended; at once for a request without a caller trace. */
  after(trace: CallerTrace | undefined, work: () => void): void {
    if (!trace) return work();
    const finish = (): void => {
      if (this.waiting.delete(finish)) work();
    };
    this.waiting.add(finish);
    trace.whenEnded(finish);
  }

  /** Runs every work still waiting for its caller. */
  flush(): void {
    for (const finish of [...this.waiting]) finish();
  }
}
