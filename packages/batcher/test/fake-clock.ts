import type { Clock } from '../src/clock.js';

/**
 * A clock that moves only when a test says so (microseconds), and by `stepPerRead` on every
 * read: a decision that reads it twice sees two times, as on a real clock.
 */
export class FakeClock implements Clock {
  constructor(
    private time = 0,
    private readonly stepPerRead = 0,
  ) {}

  now(): number {
    const time = this.time;
    this.time += this.stepPerRead;
    return time;
  }

  advance(microseconds: number): void {
    this.time += microseconds;
  }
}
