import type { Clock } from '../src/clock.js';

/** A clock that moves only when a test says so (microseconds). */
export class FakeClock implements Clock {
  constructor(private time = 0) {}

  now(): number {
    return this.time;
  }

  advance(microseconds: number): void {
    this.time += microseconds;
  }
}
