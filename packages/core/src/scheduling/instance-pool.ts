import type { InstanceHealth } from '../contract/backend.js';
import { InferenceError } from '../errors.js';
import type { InstanceRunner } from './instance-runner.js';
import type { LimitedInstance, RateLimiter } from './rate-limiter.js';

type Health = { readonly state: 'healthy' } | { readonly state: 'recovering' | 'failed'; readonly reason: string };

const HEALTHY: Health = { state: 'healthy' };

/**
 * The instances of one model version, which every scheduler of it draws from: hands
 * out idle healthy instances and takes them back after a run. An instance that reports
 * itself unhealthy (InstanceHealth) leaves the pool until it reports itself restored.
 * Slots exist before their instances, so an instance can report while it is created.
 *
 * Under a rate limiter an idle instance runs only once the limiter grants it its
 * resources: acquiring stages it with the limiter, and a grant that comes later calls
 * the scheduler's hook. Schedulers acquire only for work they hold (Triton stages an
 * instance for a formed batch), so a grant is taken at once; one the scheduler does
 * not take in the dispatch its hook runs (its work ended) is given back.
 */
export class InstancePool {
  private readonly runners: (InstanceRunner | undefined)[];
  private readonly health: Health[];
  private readonly free: InstanceRunner[] = [];
  /**
   * Whether each slot's instance is running, by slot: not a Set of runners, whose add and
   * delete on every run would rehash a long-lived table (see live-set.ts).
   */
  private readonly busy: boolean[];
  /** Slots failed for good: `failure` is read on every dispatch. */
  private failedCount = 0;
  private onAvailable: () => void = () => {};
  /** Under a rate limiter: each slot's place with it, and the idle instances it has granted, not yet taken. */
  private limiter: { readonly limiter: RateLimiter; readonly slots: readonly LimitedInstance[] } | undefined = undefined;
  private readonly granted: InstanceRunner[] = [];
  /** The slot acquire() is staging: a grant made to it at once is the answer, not news for the scheduler. */
  private staging: number | undefined = undefined;

  constructor(size: number) {
    this.runners = new Array<InstanceRunner | undefined>(size).fill(undefined);
    this.health = new Array<Health>(size).fill(HEALTHY);
    this.busy = new Array<boolean>(size).fill(false);
  }

  /** The health reporter of slot `index`, handed to the backend with the instance's context. */
  reporter(index: number): InstanceHealth {
    return {
      recovering: (reason) => this.setHealth(index, { state: 'recovering', reason }),
      restored: () => this.setHealth(index, HEALTHY),
      failed: (reason) => this.setHealth(index, { state: 'failed', reason }),
    };
  }

  /** Puts the runner of slot `index` into service. */
  attach(index: number, runner: InstanceRunner): void {
    this.runners[index] = runner;
    if (this.health[index]!.state === 'healthy') this.free.push(runner);
  }

  /** The model's scheduler's hook (one scheduler per model version): called whenever an instance may have become available (or every one failed). */
  listen(onAvailable: () => void): void {
    this.onAvailable = onAvailable;
  }

  /** The number of instance slots (instance_group counts summed). */
  get size(): number {
    return this.runners.length;
  }

  /**
   * Puts the pool's instances under `limiter` (Triton's rate limiter), one LimitedInstance
   * per slot; refuses them as the limiter does. Before any instance is attached.
   */
  limit(limiter: RateLimiter, slots: readonly LimitedInstance[]): void {
    limiter.register(slots);
    this.limiter = { limiter, slots };
  }

  /** Takes the pool's instances out of the limiter (after the last run). */
  unlimit(): void {
    this.limiter?.limiter.unregister(this.limiter.slots);
  }

  /** The limiter granted slot `index` its resources (LimitedInstance.granted): the instance may run. */
  grant(index: number): void {
    const runner = this.runners[index];
    if (!runner || !this.free.includes(runner)) {
      // No longer idle and healthy: the resources go on to the next in line.
      this.limiter!.limiter.giveBack(this.limiter!.slots[index]!);
      return;
    }
    this.granted.push(runner);
    // The instance acquire() is staging takes its grant at once; any other may find its work gone.
    if (index === this.staging) return;
    // The scheduler hears first: a dispatch it queues as a microtask must run before the give-back, or the grant
    // always goes back untaken and the instance loses its turn to whoever else waits.
    this.onAvailable();
    queueMicrotask(() => this.giveBackUntaken(runner, index));
  }

  /** Whether an idle healthy instance is waiting for work (under a rate limiter it may still wait for resources: see acquire). */
  get hasIdle(): boolean {
    return this.free.length > 0;
  }

  /** Whether the instance of slot `index` is idle and healthy. */
  isIdle(index: number): boolean {
    const runner = this.runners[index];
    return runner !== undefined && this.free.includes(runner);
  }

  /**
   * An idle healthy instance, now busy, or undefined when there is none. Under a rate
   * limiter only one granted its resources: otherwise asking stages the idle instance
   * the limiter would choose, and its grant calls the scheduler's hook later.
   */
  acquire(): InstanceRunner | undefined {
    if (!this.limiter) {
      const runner = this.free.pop();
      if (runner) this.busy[this.runners.indexOf(runner)] = true;
      return runner;
    }
    if (this.granted.length === 0) {
      const next = this.nextToStage();
      if (next !== undefined) this.stage(next);
    }
    const runner = this.granted.pop();
    if (runner) this.take(runner);
    return runner;
  }

  /** The instance of slot `index` if it is idle and healthy, now busy (sequence slots belong to one instance); under a rate limiter, as acquire(). */
  acquireAt(index: number): InstanceRunner | undefined {
    if (!this.isIdle(index)) return undefined;
    const runner = this.runners[index]!;
    if (this.limiter) {
      if (!this.granted.includes(runner)) this.stage(index);
      const at = this.granted.indexOf(runner);
      if (at === -1) return undefined;
      this.granted.splice(at, 1);
    }
    this.take(runner);
    return runner;
  }

  /**
   * Takes back an instance after its run; it serves again only if it is healthy, and
   * then the scheduler hears of it. Returns whether it did. Bound, so that a scheduler
   * can pass it as a run's `then` (InstanceRunner.run).
   */
  readonly release = (runner: InstanceRunner): boolean => {
    const index = this.runners.indexOf(runner);
    this.busy[index] = false;
    const healthy = this.health[index]!.state === 'healthy';
    if (healthy) this.free.push(runner);
    if (!this.limiter) {
      if (healthy) this.onAvailable();
      return healthy;
    }
    const { limiter, slots } = this.limiter;
    // With no one waiting, the resources are free at once for whoever asks next. Otherwise they are handed
    // on once the scheduler (whose dispatch may be a microtask) has staged what it still has to run: as
    // Triton re-stages a released instance before it allocates, this model's next run waits its turn by
    // priority beside the others.
    const waiting = limiter.hasWaiting;
    if (!waiting) limiter.release(slots[index]!);
    if (healthy) this.onAvailable();
    if (waiting) queueMicrotask(() => limiter.release(slots[index]!));
    return healthy;
  };

  /** Why no instance can ever run again; undefined while one can (or may recover). */
  get failure(): string | undefined {
    if (this.failedCount < this.health.length) return undefined;
    return [...new Set(this.health.map((h) => (h.state === 'failed' ? h.reason : '')))].join('; ');
  }

  /** Resolves when no instance is running anything. */
  async idle(): Promise<void> {
    await Promise.all(this.attached().map((runner) => runner.idle()));
  }

  attached(): InstanceRunner[] {
    return this.runners.filter((runner) => runner !== undefined);
  }

  private take(runner: InstanceRunner): void {
    this.free.splice(this.free.indexOf(runner), 1);
    this.busy[this.runners.indexOf(runner)] = true;
  }

  /** The idle, healthy, not yet staged slot that the limiter would choose first. */
  private nextToStage(): number | undefined {
    let next: number | undefined;
    for (const runner of this.free) {
      const index = this.runners.indexOf(runner);
      const slot = this.limiter!.slots[index]!;
      if (!slot.staged && (next === undefined || slot.scaledPriority < this.limiter!.slots[next]!.scaledPriority)) next = index;
    }
    return next;
  }

  private stage(index: number): void {
    this.staging = index;
    try {
      this.limiter!.limiter.stage(this.limiter!.slots[index]!);
    } finally {
      this.staging = undefined;
    }
  }

  /** An idle instance that stops serving: out of the limiter's line, and its grant handed on. */
  private leaveLimiter(runner: InstanceRunner, index: number): void {
    this.limiter!.limiter.unstage(this.limiter!.slots[index]!);
    this.giveBackUntaken(runner, index);
  }

  /** A grant still untaken once the scheduler has had its turn: handed on. */
  private giveBackUntaken(runner: InstanceRunner, index: number): void {
    const at = this.granted.indexOf(runner);
    if (at === -1) return;
    this.granted.splice(at, 1);
    this.limiter!.limiter.giveBack(this.limiter!.slots[index]!);
  }

  private setHealth(index: number, health: Health): void {
    const was = this.health[index]!;
    // Failed is for good, as InstanceHealth says: a later report cannot bring it back.
    if (was.state === 'failed') return;
    this.health[index] = health;
    if (health.state === 'failed') this.failedCount++;
    const runner = this.runners[index];
    if (!runner || this.busy[index]) {
      // Not in service yet, or running: attach() and release() read the new health.
      if (health.state === 'failed') this.onAvailable();
      return;
    }
    if (was.state === 'healthy' && health.state !== 'healthy') {
      this.free.splice(this.free.indexOf(runner), 1); // idle and healthy: it is in `free`
      if (this.limiter) this.leaveLimiter(runner, index);
    }
    if (was.state !== 'healthy' && health.state === 'healthy') this.free.push(runner);
    this.onAvailable();
  }
}

/** What a waiting request is told once every instance has failed for good (`pool.failure`). */
export function noInstanceCanRun(request: { describe(): string }, failure: string): InferenceError {
  return new InferenceError('UNAVAILABLE', `${request.describe()}: no instance of the model can run: ${failure}`);
}
