import type { Clock } from '../src/clock.js';

/** A clock that moves only when a test says so (microseconds). */
export class FakeClock implements Clock {
  private time = 0;

  now(): number {
    return this.time;
  }

  advance(us: number): void {
    this.time += us;
  }
}
