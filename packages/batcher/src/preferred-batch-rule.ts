/** A run of queued items that fit one batch, walked in service order. */
export interface BatchRun {
  /** items in the run */
  readonly count: number;
  /** rows they hold */
  readonly rows: number;
  /** items up to the largest preferred batch size the run reaches; 0 for none */
  readonly preferredCount: number;
  /** the walk stopped at an item that could not join (no room, or not batchable with the run) */
  readonly cutShort: boolean;
  /** when the run's oldest item became a candidate (µs): the queue delay counts from here */
  readonly oldest: number;
}

export interface PreferredBatchRule {
  readonly largestPreferredSize: number;
  readonly maxQueueDelayMicroseconds: number;
}

/**
 * Triton's dynamic-batcher decision (GetDynamicBatch), shared by the dynamic batcher and
 * the oldest sequence strategy: how many of the run's items to send now; 0 to wait until
 * `run.oldest + maxQueueDelayMicroseconds`.
 * - the preferred prefix at once, unless the delay has passed;
 * - the whole run once the delay has passed (or `waitForDelay` is false: draining), with
 *   no delay configured, or when the run cannot grow (cut short, or at the largest
 *   preferred size).
 */
export function preferredBatchCount(run: BatchRun, rule: PreferredBatchRule, now: number, waitForDelay: boolean): number {
  const delay = rule.maxQueueDelayMicroseconds;
  const delayPassed = !waitForDelay || (delay > 0 && now - run.oldest >= delay);
  if (run.preferredCount > 0 && !delayPassed) return run.preferredCount;
  if (delayPassed || run.cutShort || delay === 0 || run.rows >= rule.largestPreferredSize) return run.count;
  return 0;
}
