/** What a priority level does with its queue (Triton's ModelQueuePolicy). */
export interface QueuePolicy {
  readonly timeoutAction: 'REJECT' | 'DELAY';
  readonly defaultTimeoutMicroseconds: number;
  readonly allowTimeoutOverride: boolean;
  /** 0 = unbounded */
  readonly maxQueueSize: number;
}

/**
 * The queue timeout (µs, 0 = none) an item gets under `policy`. As in Triton, a
 * request may only shorten the policy's timeout: a longer one is ignored, and so is
 * any request timeout when the policy has none (default 0).
 */
export function queueTimeout(policy: QueuePolicy, requestedMicroseconds: number): number {
  const fallback = policy.defaultTimeoutMicroseconds;
  if (policy.allowTimeoutOverride && requestedMicroseconds > 0 && requestedMicroseconds < fallback) {
    return requestedMicroseconds;
  }
  return fallback;
}
