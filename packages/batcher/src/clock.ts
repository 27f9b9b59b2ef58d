import { performance } from 'node:perf_hooks';

/** Time in microseconds on a monotonic clock. Tests pass a fake one to step time by hand. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = {
  now: () => performance.now() * 1000,
};
