import { performance } from 'node:perf_hooks';

/** What a breaker tells its owner: it opened (calls stop), or closed (calls go through again). */
export interface BreakerListener {
  opened(error: Error): void;
  closed(): void;
}

/**
 * Keeps calls away from a dependency that failed, so that a stuck one costs one call's
 * timeout, not every call's: closed, calls go through; a failure opens it, and calls are
 * refused (the caller falls back at once) until `coolDownMs` has passed; then one call at
 * a time goes through as a probe. Any answer closes it; another failure opens it again.
 */
export class CircuitBreaker {
  private state: 'closed' | 'open' | 'probing' = 'closed';
  private openedAt = 0;

  constructor(
    private readonly coolDownMs: number,
    private readonly listener: BreakerListener,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Whether a call may go now (when it does, report how it ended: succeeded or failed). */
  admits(): boolean {
    if (this.state === 'closed') return true;
    if (this.state === 'probing' || this.now() - this.openedAt < this.coolDownMs) return false;
    this.state = 'probing';
    return true;
  }

  succeeded(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.listener.closed();
  }

  failed(error: Error): void {
    const wasClosed = this.state === 'closed';
    this.state = 'open';
    this.openedAt = this.now();
    if (wasClosed) this.listener.opened(error);
  }
}
