import type { InstanceHealth } from '../contract/backend.js';
import { InferenceError } from '../errors.js';
import type { InstanceRunner } from './instance-runner.js';

type Health = { readonly state: 'healthy' } | { readonly state: 'recovering' | 'failed'; readonly reason: string };

const HEALTHY: Health = { state: 'healthy' };

/**
 * The instances of one model version, which every scheduler of it draws from: hands
 * out idle healthy instances and takes them back after a run. An instance that reports
 * itself unhealthy (InstanceHealth) leaves the pool until it reports itself restored.
 * Slots exist before their instances, so an instance can report while it is created.
 */
export class InstancePool {
  private readonly runners: (InstanceRunner | undefined)[];
  private readonly health: Health[];
  private readonly free: InstanceRunner[] = [];
  private readonly busy = new Set<InstanceRunner>();
  /** Slots failed for good: `failure` is read on every dispatch. */
  private failedCount = 0;
  private onAvailable: () => void = () => {};

  constructor(size: number) {
    this.runners = new Array<InstanceRunner | undefined>(size).fill(undefined);
    this.health = new Array<Health>(size).fill(HEALTHY);
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

  /** Whether an idle healthy instance is waiting for work. */
  get hasIdle(): boolean {
    return this.free.length > 0;
  }

  /** An idle healthy instance, now busy, or undefined when there is none. */
  acquire(): InstanceRunner | undefined {
    const runner = this.free.pop();
    if (runner) this.busy.add(runner);
    return runner;
  }

  /** The instance of slot `index` if it is idle and healthy, now busy (sequence slots belong to one instance). */
  acquireAt(index: number): InstanceRunner | undefined {
    const runner = this.runners[index];
    const at = runner ? this.free.indexOf(runner) : -1;
    if (at === -1) return undefined;
    this.free.splice(at, 1);
    this.busy.add(runner!);
    return runner;
  }

  /** Whether the instance of slot `index` is idle and healthy. */
  isIdle(index: number): boolean {
    const runner = this.runners[index];
    return runner !== undefined && this.free.includes(runner);
  }

  /**
   * Takes back an instance after its run; it serves again only if it is healthy, and
   * then the scheduler hears of it. Returns whether it did.
   */
  release(runner: InstanceRunner): boolean {
    this.busy.delete(runner);
    if (this.health[this.runners.indexOf(runner)]!.state !== 'healthy') return false;
    this.free.push(runner);
    this.onAvailable();
    return true;
  }

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

  private setHealth(index: number, health: Health): void {
    const was = this.health[index]!;
    // Failed is for good, as InstanceHealth says: a later report cannot bring it back.
    if (was.state === 'failed') return;
    this.health[index] = health;
    if (health.state === 'failed') this.failedCount++;
    const runner = this.runners[index];
    if (!runner || this.busy.has(runner)) {
      // Not in service yet, or running: attach() and release() read the new health.
      if (health.state === 'failed') this.onAvailable();
      return;
    }
    if (was.state === 'healthy' && health.state !== 'healthy') this.free.splice(this.free.indexOf(runner), 1); // idle and healthy: it is in `free`
    if (was.state !== 'healthy' && health.state === 'healthy') this.free.push(runner);
    this.onAvailable();
  }
}

/** What a waiting request is told once every instance has failed for good (`pool.failure`). */
export function noInstanceCanRun(request: { describe(): string }, failure: string): InferenceError {
  return new InferenceError('UNAVAILABLE', `${request.describe()}: no instance of the model can run: ${failure}`);
}
