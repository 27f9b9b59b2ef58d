import type { BatchChoice } from './batch-choice.js';
import type { Sequence, SequenceItem } from './sequence.js';

export interface OldestBatchRules {
  readonly maxBatchSize: number;
  readonly preferredBatchSizes: readonly number[];
  readonly maxQueueDelayMicroseconds: number;
}

/**
 * Triton's oldest strategy for one instance: the candidates are the ready head items of the
 * instance's sequences, in the order they became ready, and Triton's dynamic-batcher rule picks
 * how many go (each sequence item counts 1):
 * - the largest preferred size the candidates reach, at once, unless the delay has passed;
 * - otherwise all of them (up to maxBatchSize) when they fill the largest preferred size (or
 *   maxBatchSize), overflow maxBatchSize, there is no delay, or the delay has passed;
 * - otherwise wait until the oldest candidate has waited the delay.
 * `waitForDelay` false (draining) treats the delay as passed.
 */
export function chooseOldestBatch<T extends SequenceItem>(
  slots: readonly (Sequence<T> | undefined)[],
  rules: OldestBatchRules,
  now: number,
  waitForDelay: boolean,
): BatchChoice<Sequence<T>> {
  const candidates = slots
    .filter((sequence): sequence is Sequence<T> => sequence !== undefined && sequence.ready)
    .sort((a, b) => a.headReadyAt - b.headReadyAt);
  if (candidates.length === 0) return undefined;

  const pending = candidates.slice(0, rules.maxBatchSize);
  const sizes = rules.preferredBatchSizes.filter((size) => size <= rules.maxBatchSize);
  const bestPreferred = Math.max(0, ...sizes.filter((size) => size <= pending.length));
  const oldest = pending[0].headReadyAt;
  const delay = rules.maxQueueDelayMicroseconds;
  const delayPassed = !waitForDelay || (delay > 0 && now - oldest >= delay);

  if (bestPreferred > 0 && !delayPassed) return { take: pending.slice(0, bestPreferred) };
  const full = sizes.length > 0 ? Math.max(...sizes) : rules.maxBatchSize;
  const overflow = candidates.length > rules.maxBatchSize;
  if (overflow || pending.length >= full || delay === 0 || delayPassed) return { take: pending };
  return { waitUntil: oldest + delay };
}
