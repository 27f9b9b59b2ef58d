import type { BatchChoice } from './batch-choice.js';
import type { Sequence, SequenceItem } from './sequence.js';

export interface DirectBatchRules {
  readonly maxQueueDelayMicroseconds: number;
  readonly minimumSlotUtilization: number;
}

/**
 * Triton's direct strategy for one instance: every slot with a ready item sends it, the slots
 * below the highest such slot that have none send a null item (so each sequence keeps its row),
 * and the batch is that long. It waits only when both a delay and a minimum utilization are set:
 * then it sends once ready slots / all slots reaches the minimum or the oldest ready item has
 * waited the delay. `waitForDelay` false (draining) sends whatever is ready.
 */
export function chooseDirectBatch<T extends SequenceItem>(
  slots: readonly (Sequence<T> | undefined)[],
  rules: DirectBatchRules,
  now: number,
  waitForDelay: boolean,
): BatchChoice<Sequence<T>> {
  let highest = -1;
  let readyCount = 0;
  let oldest = Infinity;
  for (let slot = 0; slot < slots.length; slot++) {
    const sequence = slots[slot];
    if (!sequence?.ready) continue;
    highest = slot;
    readyCount++;
    oldest = Math.min(oldest, sequence.headEnqueuedAt);
  }
  if (highest < 0) return undefined;

  const delay = rules.maxQueueDelayMicroseconds;
  const minimum = rules.minimumSlotUtilization;
  const mayWait = waitForDelay && delay > 0 && minimum > 0;
  if (mayWait && readyCount / slots.length < minimum && now - oldest < delay) {
    return { waitUntil: oldest + delay };
  }
  return { take: slots.slice(0, highest + 1).map((sequence) => (sequence?.ready ? sequence : undefined)) };
}
