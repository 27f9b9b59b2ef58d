import type { BatchChoice } from './batch-choice.js';
import { preferredBatchCount } from './preferred-batch-rule.js';
import type { Sequence, SequenceItem } from './sequence.js';

export interface OldestBatchRules {
  readonly maxBatchSize: number;
  readonly preferredBatchSizes: readonly number[];
  readonly maxQueueDelayMicroseconds: number;
}

/**
 * Triton's oldest strategy for one instance: the candidates are the ready head items of the
 * instance's sequences, in the order they became ready, and Triton's dynamic-batcher rule
 * (preferredBatchCount, each sequence item one row) picks how many go, up to maxBatchSize.
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
  const pending = candidates.slice(0, rules.maxBatchSize);
  // none ready (maxBatchSize is at least 1: SequenceBatcher refuses less)
  const [head] = pending;
  if (head === undefined) return undefined;

  const listed = rules.preferredBatchSizes.filter((size) => size <= rules.maxBatchSize);
  // As Triton's config normalization: no preferred size means max_batch_size.
  const sizes = listed.length > 0 ? listed : [rules.maxBatchSize];
  const oldest = head.headReadyAt;
  const run = {
    count: pending.length,
    rows: pending.length,
    preferredCount: Math.max(0, ...sizes.filter((size) => size <= pending.length)),
    cutShort: candidates.length > rules.maxBatchSize,
    oldest,
  };
  const rule = { largestPreferredSize: Math.max(...sizes), maxQueueDelayMicroseconds: rules.maxQueueDelayMicroseconds };
  const send = preferredBatchCount(run, rule, now, waitForDelay);
  return send > 0 ? { take: pending.slice(0, send) } : { waitUntil: oldest + rules.maxQueueDelayMicroseconds };
}
