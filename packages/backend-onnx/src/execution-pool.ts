import { availableParallelism } from 'node:os';
import type { ResourceLimits } from 'node:worker_threads';
import { InferenceError } from '@tritium/core/backend';
import { PoolSession } from './pool-session.js';
import { PoolThread } from './pool-thread.js';
import type { OrtRuntime, OrtSessionOptions, SessionSource } from './runtime.js';

/**
 * Per onnxruntime package: settles once the process's first pooled session has opened
 * (or failed to). Later opens wait for it, so onnxruntime's one-time start-up (25 ms to
 * 400 ms, its environment created) happens on one thread alone.
 */
const startUps = new Map<string, Promise<void>>();

/**
 * The threads that host every pooled session of a backend's models: at most `size`
 * (default one per core), started as sessions need them and ended with their last
 * session, so threads and isolates do not grow with the number of models. A session
 * goes to the thread hosting the fewest of its model's sessions, then the fewest in
 * all; a new thread starts while the pool is under size and every thread hosts one.
 * A thread that dies leaves the pool; its sessions' replacements go to the others,
 * or to a new one.
 */
export class ExecutionPool {
  private readonly threads: PoolThread[] = [];
  /** The open sessions of each group, which stand in for each other when a thread is busy. */
  private readonly groups = new Map<string, Set<PoolSession>>();

  constructor(
    readonly size = availableParallelism(),
    private readonly resourceLimits?: ResourceLimits,
    /** The threads' nice value on Linux (onnxBackend's executionThreadPriority); undefined leaves the process's. */
    private readonly priority?: number,
  ) {}

  /** Intra-op threads for a session when its config sets none: the cores shared out among the pool's threads, which run at once. */
  get intraOpThreads(): number {
    return Math.max(1, Math.floor(availableParallelism() / this.size));
  }

  /** Opens a session of `group` (a model) on a pool thread; rejects with onnxruntime's reason if it cannot. */
  async open(runtime: OrtRuntime, source: SessionSource, options: OrtSessionOptions, what: string, group: string): Promise<PoolSession> {
    const startingUp = startUps.get(runtime.packageName);
    if (startingUp) await startingUp;
    let started = () => {};
    if (!startingUp) startUps.set(runtime.packageName, new Promise<void>((resolve) => (started = resolve)));
    try {
      // Inside the try: a thread that cannot be started (new Worker throws, e.g. EAGAIN) must
      // still settle the start-up promise, or every later open in the process would wait forever.
      let host: PoolThread;
      try {
        host = this.place(group);
      } catch (error) {
        throw new InferenceError('UNAVAILABLE', `${what}: no execution pool thread could be started: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
      }
      const hosted = await host.open(runtime, source, options, what, group);
      for (const [key, sessions] of this.groups) if (sessions.size === 0) this.groups.delete(key);
      let siblings = this.groups.get(group);
      if (!siblings) this.groups.set(group, (siblings = new Set()));
      const session = new PoolSession(host, hosted, group, siblings, what);
      siblings.add(session);
      return session;
    } finally {
      started();
    }
  }

  private place(group: string): PoolThread {
    let best: PoolThread | undefined;
    for (const thread of this.threads) {
      if (!best || thread.hosts(group) < best.hosts(group) || (thread.hosts(group) === best.hosts(group) && thread.size < best.size)) best = thread;
    }
    if (best && (best.size === 0 || this.threads.length >= this.size)) return best;
    const thread: PoolThread = new PoolThread(this.resourceLimits, this.priority, () => this.threads.splice(this.threads.indexOf(thread), 1));
    this.threads.push(thread);
    return thread;
  }
}
