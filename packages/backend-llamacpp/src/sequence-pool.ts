import { InferenceError } from '@tritium/core/backend';
import type { LlamaContext, LlamaContextSequence } from 'node-llama-cpp';

/**
 * The context's parallel sequences, lent one per generating request. A request that
 * finds none free waits (first come, first served) and takes the first one given back,
 * so requests join the running batch as others leave it.
 */
export class SequencePool {
  private readonly free: LlamaContextSequence[] = [];
  private readonly waiting: Array<{ resolve: (sequence: LlamaContextSequence) => void; reject: (error: Error) => void }> = [];

  constructor(context: LlamaContext) {
    for (let i = 0; i < context.totalSequences; i++) this.free.push(context.getSequence());
  }

  /** A sequence with an empty cache; rejects with CANCELLED when the request is cancelled first. */
  acquire(onCancel: (listener: () => void) => () => void): Promise<LlamaContextSequence> {
    const sequence = this.free.pop();
    if (sequence) return Promise.resolve(sequence);
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: (sequence: LlamaContextSequence) => {
          stopListening();
          resolve(sequence);
        },
        reject,
      };
      this.waiting.push(waiter);
      const stopListening = onCancel(() => {
        const index = this.waiting.indexOf(waiter);
        if (index >= 0) this.waiting.splice(index, 1);
        reject(new InferenceError('CANCELLED', 'the request was cancelled while waiting for a free sequence'));
      });
    });
  }

  /** Empties the sequence's cache and lends it to the next waiter. */
  async release(sequence: LlamaContextSequence): Promise<void> {
    await sequence.clearHistory();
    const next = this.waiting.shift();
    if (next) next.resolve(sequence);
    else this.free.push(sequence);
  }

  /** Fails every waiter (the instance is finalizing). */
  close(reason: string): void {
    for (const waiter of this.waiting.splice(0)) waiter.reject(new InferenceError('UNAVAILABLE', reason));
  }
}
