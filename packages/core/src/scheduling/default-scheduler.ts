import { Fifo } from './fifo.js';
import type { InferenceRequest } from './inference-request.js';
import type { InstanceRunner } from './instance-runner.js';
import type { Scheduler } from './scheduler.js';

/**
 * Triton's default scheduler: one request per execution, on any free instance, in
 * arrival order. A request that ended while waiting (cancelled, timed out) is skipped.
 */
export class DefaultScheduler implements Scheduler {
  private readonly waiting = new Fifo<InferenceRequest>();
  private readonly free: InstanceRunner[];

  constructor(instances: readonly InstanceRunner[]) {
    this.free = [...instances];
  }

  enqueue(request: InferenceRequest): void {
    const runner = this.waiting.length === 0 ? this.free.pop() : undefined;
    if (runner) this.runOn(runner, request);
    else this.waiting.push(request);
  }

  private runOn(runner: InstanceRunner, request: InferenceRequest): void {
    void runner.run([request]).then(() => {
      const next = this.nextWaiting();
      if (next) this.runOn(runner, next);
      else this.free.push(runner);
    });
  }

  private nextWaiting(): InferenceRequest | undefined {
    let request = this.waiting.shift();
    while (request?.response.isEnded) request = this.waiting.shift();
    return request;
  }
}
