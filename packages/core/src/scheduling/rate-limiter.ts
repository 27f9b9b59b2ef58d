import { InferenceError } from '../errors.js';

/** Triton's --rate-limit: `off` runs a batch as soon as an instance is free; `execution_count` also waits for its resources, by priority. */
export type RateLimitMode = 'off' | 'execution_count';

/** Triton's --rate-limit-resource: how many copies of a resource there are, on `device` or (without one) on every device. */
export interface RateLimitResource {
  readonly name: string;
  readonly count: number;
  readonly device?: number;
}

export interface RateLimitOptions {
  /** `off` by default, as in Triton. */
  readonly mode?: RateLimitMode;
  /** Resources given explicitly; without any, each resource has the most any loaded instance needs. */
  readonly resources?: readonly RateLimitResource[];
}

/** The device of a global resource: one set of copies for the whole server. */
const GLOBAL = 'global';

/** What an instance group's rate_limiter block asks, as the config holds it. */
export interface InstanceRateLimit {
  readonly resources: readonly { readonly name: string; readonly global: boolean; readonly count: number }[];
  readonly priority: number;
}

/**
 * One model instance under the limiter. Its resources are held from the grant until the
 * execution ends (or the grant is given back unused).
 */
export class LimitedInstance {
  /** Executions run: with the priority, its place among the instances waiting (Triton's ScaledPriority). */
  executions = 0;
  staged = false;
  /** Resource copies needed, by device ('global' or a device id) and name. */
  readonly needs: ReadonlyMap<string, ReadonlyMap<string, number>>;
  /** The same, bound to the limiter's counters when registered: what a grant reads and changes. */
  uses: readonly { readonly counter: ResourceCounter; readonly count: number }[] = [];

  constructor(
    /** Names the instance in refusals: `model 'm' instance m_0_0`. */
    readonly label: string,
    limit: InstanceRateLimit,
    device: number,
    /** Called when the instance's resources are allocated to it: it may run. */
    readonly granted: () => void,
    private readonly priority = Math.max(1, limit.priority),
  ) {
    const needs = new Map<string, Map<string, number>>();
    for (const resource of limit.resources) {
      const key = resource.global ? GLOBAL : String(device);
      const byName = needs.get(key) ?? new Map<string, number>();
      byName.set(resource.name, resource.count);
      needs.set(key, byName);
    }
    this.needs = needs;
  }

  /** Triton's rule: priority 0 counts as 1; an instance of priority 2 is chosen half as often as one of priority 1. */
  get scaledPriority(): number {
    return this.executions * this.priority;
  }
}

/** One resource on one device: its copies and how many are allocated now. */
interface ResourceCounter {
  limit: number;
  allocated: number;
}

/**
 * Triton's rate limiter in `execution_count` mode, across every model of a server.
 * Instances that have work are staged; the one with the lowest scaled priority is
 * granted its resources as soon as they are free, and the others wait behind it as
 * in Triton (a waiting instance is never overtaken by one that needs less). In `off`
 * mode there is no limiter at all (InstancePool gets none).
 */
export class RateLimiter {
  private readonly instances = new Set<LimitedInstance>();
  private readonly explicit: readonly RateLimitResource[];
  /** Each resource in use, by `<device>/<name>`. */
  private readonly counters = new Map<string, ResourceCounter>();
  private staged: LimitedInstance[] = [];
  private allocating = false;
  private allocateAgain = false;

  constructor(resources: readonly RateLimitResource[] = []) {
    this.explicit = resources.map(checkResource);
  }

  /**
   * Adds a model version's instances; refuses them (INVALID_ARG naming the resource)
   * when the resources given cannot run one of them, as Triton refuses the load.
   */
  register(instances: readonly LimitedInstance[]): void {
    for (const instance of instances) this.instances.add(instance);
    let limits: Map<string, Map<string, number>>;
    try {
      limits = this.computeLimits();
    } catch (error) {
      this.unregister(instances);
      throw error;
    }
    this.setLimits(limits);
    for (const instance of instances) {
      instance.uses = [...instance.needs].flatMap(([device, needs]) => [...needs].map(([name, count]) => ({ counter: this.counters.get(`${device}/${name}`)!, count })));
    }
  }

  unregister(instances: readonly LimitedInstance[]): void {
    for (const instance of instances) {
      this.instances.delete(instance);
      this.unstage(instance);
    }
    this.setLimits(this.computeLimits());
    this.allocate();
  }

  /** Counters keep what is allocated across a change of limits: executions running hold their copies until they end. */
  private setLimits(limits: Map<string, Map<string, number>>): void {
    for (const counter of this.counters.values()) counter.limit = 0;
    for (const [device, byName] of limits) {
      for (const [name, limit] of byName) {
        const key = `${device}/${name}`;
        const counter = this.counters.get(key);
        if (counter) counter.limit = limit;
        else this.counters.set(key, { limit, allocated: 0 });
      }
    }
  }

  /** Whether an instance waits for resources. */
  get hasWaiting(): boolean {
    return this.staged.length > 0;
  }

  /** The instance has work: it is granted its resources when they are free and its turn comes (at once, if they are). */
  stage(instance: LimitedInstance): void {
    if (instance.staged) return;
    instance.staged = true;
    this.staged.push(instance);
    this.allocate();
  }

  unstage(instance: LimitedInstance): void {
    if (!instance.staged) return;
    instance.staged = false;
    this.staged.splice(this.staged.indexOf(instance), 1);
  }

  /** A grant not used (the work went elsewhere or ended): its resources go to the next in line. */
  giveBack(instance: LimitedInstance): void {
    this.change(instance, -1);
    this.allocate();
  }

  /** An execution ended: its resources go to the next in line, and it counts one more execution. */
  release(instance: LimitedInstance): void {
    instance.executions++;
    this.giveBack(instance);
  }

  /** Grants resources to staged instances in turn while the first in line fits; re-entrant calls (from a grant) loop here instead. */
  private allocate(): void {
    if (this.allocating) {
      this.allocateAgain = true;
      return;
    }
    this.allocating = true;
    try {
      do {
        this.allocateAgain = false;
        for (let next = this.first(); next && this.fits(next); next = this.first()) {
          this.unstage(next);
          this.change(next, 1);
          next.granted();
        }
      } while (this.allocateAgain);
    } finally {
      this.allocating = false;
    }
  }

  /** The staged instance with the lowest scaled priority; the earliest staged among equals. */
  private first(): LimitedInstance | undefined {
    let first: LimitedInstance | undefined;
    for (const instance of this.staged) if (!first || instance.scaledPriority < first.scaledPriority) first = instance;
    return first;
  }

  private fits(instance: LimitedInstance): boolean {
    for (const { counter, count } of instance.uses) if (counter.allocated + count > counter.limit) return false;
    return true;
  }

  private change(instance: LimitedInstance, sign: 1 | -1): void {
    for (const { counter, count } of instance.uses) counter.allocated += sign * count;
  }

  /**
   * Triton's ResourceManager: without explicit resources each one has the most any
   * instance needs; with them, a resource not given has none.
   */
  private computeLimits(): Map<string, Map<string, number>> {
    const limits = new Map<string, Map<string, number>>();
    const users = new Map<string, string>();
    for (const instance of this.instances) {
      for (const [device, needs] of instance.needs) {
        const byName = limits.get(device) ?? new Map<string, number>();
        for (const [name, count] of needs) {
          byName.set(name, Math.max(byName.get(name) ?? 0, count));
          if (!users.has(`${device}/${name}`)) users.set(`${device}/${name}`, instance.label);
        }
        limits.set(device, byName);
      }
    }
    for (const name of limits.get(GLOBAL)?.keys() ?? []) {
      for (const [device, byName] of limits) {
        if (device !== GLOBAL && byName.has(name)) {
          throw new InferenceError('INVALID_ARG', `Resource "${name}" is present as both global and device-specific resource in the model configuration.`);
        }
      }
    }
    if (this.explicit.length === 0) return limits;
    for (const [device, byName] of limits) {
      for (const [name, needed] of byName) {
        const given = this.explicitCount(device, name);
        if (given < needed) {
          throw new InferenceError(
            'INVALID_ARG',
            `Resource count for "${name}" is limited to ${given} which will prevent scheduling of one or more model instances, the minimum required count is ${needed} (${users.get(`${device}/${name}`)})`,
          );
        }
        byName.set(name, given);
      }
    }
    return limits;
  }

  /** A global resource takes the largest count given for its name on any device; a device's, the largest given for it or for every device. */
  private explicitCount(device: string, name: string): number {
    let count = 0;
    for (const resource of this.explicit) {
      if (resource.name !== name) continue;
      if (device === GLOBAL || resource.device === undefined || String(resource.device) === device) count = Math.max(count, resource.count);
    }
    return count;
  }
}

function checkResource(resource: RateLimitResource): RateLimitResource {
  if (typeof resource !== 'object' || resource === null) throw new InferenceError('INVALID_ARG', `a rate limiter resource must be an object { name, count, device? }, got ${String(resource)}`);
  const { name, count, device } = resource;
  if (typeof name !== 'string' || name === '') throw new InferenceError('INVALID_ARG', `a rate limiter resource needs a name, got ${JSON.stringify(resource)}`);
  if (!Number.isSafeInteger(count) || count < 0) throw new InferenceError('INVALID_ARG', `rate limiter resource '${name}': count must be a non-negative integer, got ${String(count)}`);
  if (device !== undefined && (!Number.isSafeInteger(device) || device < 0)) {
    throw new InferenceError('INVALID_ARG', `rate limiter resource '${name}': device must be a non-negative integer, got ${String(device)}`);
  }
  return resource;
}
