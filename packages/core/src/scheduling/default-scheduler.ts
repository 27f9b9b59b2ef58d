import type { InferenceError } from '../errors.js';
import { Fifo } from './fifo.js';
import type { InferenceRequest } from './inference-request.js';
import { noInstanceCanRun, type InstancePool } from './instance-pool.js';
import type { InstanceRunner } from './instance-runner.js';
import type { Scheduler } from './scheduler.js';

/**
 * Triton's default scheduler: one request per execution, on any free instance, in
 * arrival order. A request that ended while waiting (cancelled) is skipped.
 */
export class DefaultScheduler implements Scheduler {
  private readonly waiting = new Fifo<InferenceRequest>();

  constructor(private readonly pool: InstancePool) {
    pool.listen(() => this.dispatch());
  }

  enqueue(request: InferenceRequest): void {
    const runner = this.waiting.length === 0 ? this.pool.acquire() : undefined;
    if (runner) {
      this.runOn(runner, request);
      return;
    }
    this.waiting.push(request);
    if (this.pool.failure !== undefined) this.dispatch();
  }

  /** The default scheduler never holds work back: nothing to flush. */
  drain(): Promise<void> {
    return Promise.resolve();
  }

  stop(error: InferenceError): void {
    this.failWaiting(() => error);
  }

  private runOn(runner: InstanceRunner, request: InferenceRequest): void {
    runner.run([request], this.pool.release);
  }

  /** Hands waiting requests to free instances; fails them when no instance can ever run again. */
  private dispatch(): void {
    const failure = this.pool.failure;
    if (failure !== undefined) {
      this.failWaiting((request) => noInstanceCanRun(request, failure));
      return;
    }
    while (this.skipEnded()) {
      const runner = this.pool.acquire();
      if (!runner) return;
      this.runOn(runner, this.waiting.shift()!);
    }
  }

  private failWaiting(errorFor: (request: InferenceRequest) => InferenceError): void {
    for (let request = this.waiting.shift(); request; request = this.waiting.shift()) request.cancel(errorFor(request));
  }

  /** Drops ended requests from the head of the queue; true when a live one waits. */
  private skipEnded(): boolean {
    while (this.waiting.length > 0 && this.waiting.peek()!.response.isEnded) this.waiting.shift();
    return this.waiting.length > 0;
  }
}
