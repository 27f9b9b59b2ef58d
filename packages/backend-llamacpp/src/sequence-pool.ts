import { InferenceError } from '@tritium/core/backend';
import type { LlamaContext, LlamaContextSequence } from 'node-llama-cpp';

/**
 * The context's parallel sequences, lent one per generating request. The instance takes
 * a request only when a sequence is free (untilFree), so requests join the running batch
 * as others leave it, and wait meanwhile in the server's queue rather than here.
 */
export class SequencePool {
  private readonly free: LlamaContextSequence[] = [];
  private readonly freeWaiters: Array<() => void> = [];
  private closed = false;

  constructor(context: LlamaContext) {
    for (let i = 0; i < context.totalSequences; i++) this.free.push(context.getSequence());
  }

  /** Resolves once a sequence is free (at once when one is), or the pool is closed. */
  untilFree(): Promise<void> {
    if (this.free.length > 0 || this.closed) return Promise.resolve();
    return new Promise((resolve) => this.freeWaiters.push(resolve));
  }

  /** A free sequence, with an empty cache; UNAVAILABLE when none is (the instance is unloading). */
  take(): LlamaContextSequence {
    const sequence = this.closed ? undefined : this.free.pop();
    if (!sequence) throw new InferenceError('UNAVAILABLE', 'the model instance is unloading');
    return sequence;
  }

  /** Empties the sequence's cache and lends it out again. */
  async release(sequence: LlamaContextSequence): Promise<void> {
    await sequence.clearHistory();
    this.free.push(sequence);
    for (const resolve of this.freeWaiters.splice(0)) resolve();
  }

  /** Takes no more requests (the instance is finalizing); whoever waits for a free sequence goes on, to be refused. */
  close(): void {
    this.closed = true;
    for (const resolve of this.freeWaiters.splice(0)) resolve();
  }
}
