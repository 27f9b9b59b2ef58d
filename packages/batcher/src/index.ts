export { systemClock, type Clock } from './clock.js';
export { DynamicBatcher, type BatchDecision, type BatchItem, type DynamicBatcherOptions } from './dynamic-batcher.js';
export type { EnqueueResult } from './priority-queue.js';
export type { QueuePolicy } from './queue-policy.js';
export {
  SequenceBatcher,
  type SequenceBatch,
  type SequenceBatchDecision,
  type SequenceBatcherOptions,
  type SequenceEnqueueResult,
  type SequenceItem,
} from './sequence-batcher.js';
