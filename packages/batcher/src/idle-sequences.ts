/**
 * Sequences with nothing queued and nothing running, by when they went idle. Times only grow,
 * so a Map's insertion order is deadline order: the first entry is always the next to expire.
 */
export class IdleSequences<S> {
  private readonly since = new Map<S, number>();

  constructor(private readonly maxIdleMicroseconds: number) {}

  markIdle(sequence: S, now: number): void {
    this.since.delete(sequence);
    this.since.set(sequence, now);
  }

  markBusy(sequence: S): void {
    this.since.delete(sequence);
  }

  nextDeadline(): number | undefined {
    for (const since of this.since.values()) return since + this.maxIdleMicroseconds;
    return undefined;
  }

  /** Removes and returns the sequences whose deadline has come. */
  takeExpired(now: number): S[] {
    const expired: S[] = [];
    for (const [sequence, since] of this.since) {
      if (since + this.maxIdleMicroseconds > now) break;
      expired.push(sequence);
    }
    for (const sequence of expired) this.since.delete(sequence);
    return expired;
  }
}
