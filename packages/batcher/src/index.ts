export { systemClock, type Clock } from './clock.js';
export {
  SequenceBatcher,
  type SequenceBatch,
  type SequenceBatcherOptions,
  type SequenceEnqueueResult,
  type SequenceItem,
} from './sequence-batcher.js';
