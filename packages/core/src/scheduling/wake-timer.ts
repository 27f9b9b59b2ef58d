import { systemClock } from '@tritium/batcher';

/** Below this, a wait is finished by polling the clock once per event-loop turn. */
const POLL_BELOW_MICROSECONDS = 2000;

/**
 * Calls `onWake` at a time on the batchers' clock (microseconds). Node's timers have
 * millisecond granularity and fire late by up to a millisecond, so a wait is made of a
 * setTimeout that ends short of the target and setImmediate turns that poll the clock
 * for the rest: a 100 µs queue delay stays near 100 µs (bench/README.md has figures).
 * The polling turns let I/O and other callbacks run in between. A time already past
 * wakes on the next turn: never inside set(), whose caller (a dispatch) would otherwise
 * re-enter itself.
 */
export class WakeTimer {
  private at: number | undefined;
  private timeout: NodeJS.Timeout | undefined;
  private immediate: NodeJS.Immediate | undefined;
  private keepAlive = true;

  constructor(private readonly onWake: () => void) {}

  /**
   * Wakes at `at` (on the next turn when it is past; never when undefined), replacing the
   * previous time. `keepAlive` false lets the process exit meanwhile (nothing is waiting on
   * the wake but housekeeping, e.g. releasing idle sequences).
   */
  set(at: number | undefined, keepAlive = true): void {
    if (at === this.at && keepAlive === this.keepAlive) return;
    this.clear();
    if (at === undefined) return;
    this.at = at;
    this.keepAlive = keepAlive;
    this.schedule();
  }

  clear(): void {
    this.at = undefined;
    if (this.timeout) clearTimeout(this.timeout);
    if (this.immediate) clearImmediate(this.immediate);
    this.timeout = undefined;
    this.immediate = undefined;
  }

  private schedule(): void {
    const remaining = this.at! - systemClock.now();
    if (remaining < POLL_BELOW_MICROSECONDS) {
      // Never unref'd: an unref'd immediate does not stop the loop from blocking in its poll phase, so it would run late.
      this.immediate = setImmediate(this.poll);
    } else {
      // End a millisecond early: the rest is polled, so lateness is one loop turn, not a timer tick.
      this.timeout = setTimeout(this.poll, Math.floor((remaining - POLL_BELOW_MICROSECONDS / 2) / 1000));
      if (!this.keepAlive) this.timeout.unref();
    }
  }

  private readonly poll = (): void => {
    this.timeout = undefined;
    this.immediate = undefined;
    if (this.at === undefined) return;
    if (this.at > systemClock.now()) {
      this.schedule();
      return;
    }
    this.at = undefined;
    this.onWake();
  };
}
