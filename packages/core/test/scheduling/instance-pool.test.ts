import { describe, expect, it } from 'vitest';
import type { BackendInstance, BackendRequest, ExecuteResult } from '../../src/contract/backend.js';
import { InferenceError } from '../../src/errors.js';
import { ModelStatisticsRecorder } from '../../src/observability/statistics.js';
import { DefaultScheduler } from '../../src/scheduling/default-scheduler.js';
import { InferenceRequest } from '../../src/scheduling/inference-request.js';
import { InstancePool } from '../../src/scheduling/instance-pool.js';
import { InstanceRunner } from '../../src/scheduling/instance-runner.js';
import { ModelOutputs } from '../../src/scheduling/model-outputs.js';

/** A backend instance whose executions run until the test finishes them, so a test decides when an instance is busy. */
class HeldInstance implements BackendInstance {
  readonly ran: string[] = [];
  private readonly running: Array<() => void> = [];

  constructor(readonly name: string) {}

  async execute(requests: readonly BackendRequest[]): Promise<ExecuteResult> {
    this.ran.push(...requests.map((r) => r.id));
    await new Promise<void>((resolve) => this.running.push(resolve));
    return requests.map(() => ({}));
  }

  get busy(): boolean {
    return this.running.length > 0;
  }

  /** Ends the oldest execution and lets the runner's release reach the pool. */
  async finish(): Promise<void> {
    this.running.shift()!();
    await settle();
  }
}

/** Lets pending promise callbacks (execute's end, the runner's release) run. */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

type Outcome = 'ok' | InferenceError;

/** A pool of `size` held instances (all attached, as a loaded model has them) with its default scheduler. */
function model(size: number) {
  const pool = new InstancePool(size);
  const scheduler = new DefaultScheduler(pool);
  const instances = Array.from({ length: size }, (_, i) => new HeldInstance(`m_${i}`));
  const statistics = new ModelStatisticsRecorder('m', 1);
  const attach = (i: number) => pool.attach(i, new InstanceRunner(instances[i]!, false, statistics));
  const outputs = new ModelOutputs({ name: 'm', output: [] });
  const outcomes = new Map<string, Outcome>();
  const submit = (id: string): InferenceRequest => {
    const validated = { id, inputs: {}, requestedOutputs: [], batchSize: 1, parameters: {}, priority: 0, timeoutMicroseconds: 0, signal: undefined, sequence: undefined, trace: undefined };
    const sink = { response() {}, end: () => outcomes.set(id, 'ok'), error: (error: InferenceError) => outcomes.set(id, error) };
    const request = new InferenceRequest('m', 1, validated, sink, () => {}, outputs);
    scheduler.enqueue(request);
    return request;
  };
  /** Which instance ran each request id. */
  const placement = () => Object.fromEntries(instances.flatMap((instance) => instance.ran.map((id) => [id, instance.name])));
  return { pool, scheduler, instances, attach, submit, outcomes, placement };
}

function attached(size: number) {
  const m = model(size);
  for (let i = 0; i < size; i++) m.attach(i);
  return m;
}

describe('InstancePool', () => {
  it('hands out each idle instance once and takes it back after its run', async () => {
    const { pool, instances, attach } = model(2);
    attach(0);
    attach(1);
    const a = pool.acquire()!;
    const b = pool.acquire()!;
    expect(new Set([a.instance, b.instance])).toEqual(new Set(instances));
    expect(pool.acquire()).toBeUndefined();
    pool.release(a);
    expect(pool.acquire()).toBe(a);
  });

  it('keeps a recovering idle instance out until it is restored', () => {
    const { pool, attach } = model(1);
    attach(0);
    pool.reporter(0).recovering('worker died');
    expect(pool.acquire()).toBeUndefined();
    expect(pool.failure).toBeUndefined();
    pool.reporter(0).restored();
    expect(pool.acquire()).toBeDefined();
  });

  it('keeps repeated reports from putting an instance in twice or taking out one that is not in', () => {
    const { pool, attach } = model(2);
    attach(0);
    attach(1);
    const health = pool.reporter(0);
    health.restored();
    health.recovering('a');
    health.recovering('b');
    health.restored();
    health.restored();
    const first = pool.acquire();
    const second = pool.acquire();
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    expect(first).not.toBe(second);
    expect(pool.acquire()).toBeUndefined();
  });

  it('keeps a failed instance out for good: a later restored() does not bring it back', () => {
    const { pool, attach } = model(2);
    attach(0);
    attach(1);
    pool.reporter(0).failed('gone');
    pool.reporter(0).restored();
    expect(pool.acquire()).toBeDefined();
    expect(pool.acquire()).toBeUndefined();
  });

  it('honours a report made before the instance is attached (while it is created)', () => {
    const { pool, attach } = model(1);
    pool.reporter(0).recovering('warming up');
    attach(0);
    expect(pool.acquire()).toBeUndefined();
    pool.reporter(0).restored();
    expect(pool.acquire()).toBeDefined();
  });

  it('keeps a busy instance that reports recovering out after its run, until it is restored', () => {
    const { pool, attach } = model(1);
    attach(0);
    const runner = pool.acquire()!;
    pool.reporter(0).recovering('worker died');
    pool.release(runner);
    expect(pool.acquire()).toBeUndefined();
    pool.reporter(0).restored();
    expect(pool.acquire()).toBe(runner);
  });

  it('names the failure only when every instance has failed, each reason once', () => {
    const { pool, attach } = model(3);
    [0, 1, 2].forEach(attach);
    pool.reporter(0).failed('out of memory');
    pool.reporter(1).failed('out of memory');
    expect(pool.failure).toBeUndefined();
    pool.reporter(2).recovering('restarting');
    expect(pool.failure).toBeUndefined();
    pool.reporter(2).failed('device lost');
    expect(pool.failure).toBe('out of memory; device lost');
  });
});

describe('DefaultScheduler over the pool', () => {
  it('gives a recovering instance no work, and work again once it is restored', async () => {
    const m = attached(2);
    m.pool.reporter(1).recovering('worker died');
    for (const id of ['a', 'b', 'c']) m.submit(id);
    for (let i = 0; i < 3; i++) await m.instances[0]!.finish();
    expect(m.placement()).toEqual({ a: 'm_0', b: 'm_0', c: 'm_0' });
    m.pool.reporter(1).restored();
    m.submit('d');
    m.submit('e');
    expect(m.instances.map((instance) => instance.busy)).toEqual([true, true]);
    await m.instances[0]!.finish();
    await m.instances[1]!.finish();
    expect([...m.outcomes.values()]).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
  });

  it('holds requests while the only instance recovers and runs them, in order, once it is restored', async () => {
    const m = attached(1);
    m.pool.reporter(0).recovering('worker died');
    m.submit('a');
    m.submit('b');
    await settle();
    expect(m.instances[0]!.ran).toEqual([]);
    expect(m.outcomes.size).toBe(0);
    m.pool.reporter(0).restored();
    await m.instances[0]!.finish();
    await m.instances[0]!.finish();
    expect(m.instances[0]!.ran).toEqual(['a', 'b']);
    expect([...m.outcomes.values()]).toEqual(['ok', 'ok']);
  });

  it('lets an instance that reports recovering mid-run finish that run, then gives it nothing until restored', async () => {
    const m = attached(1);
    m.submit('a');
    m.pool.reporter(0).recovering('worker died');
    m.submit('b');
    await m.instances[0]!.finish();
    expect(m.outcomes.get('a')).toBe('ok');
    expect(m.instances[0]!.ran).toEqual(['a']);
    m.pool.reporter(0).restored();
    await m.instances[0]!.finish();
    expect(m.outcomes.get('b')).toBe('ok');
  });

  it('fails waiting and new requests at once with UNAVAILABLE when every instance has failed, even while one still runs', async () => {
    const m = attached(2);
    m.pool.reporter(1).failed('device lost');
    m.submit('running');
    m.submit('waiting');
    expect(m.outcomes.size).toBe(0);
    // The last instance fails during its run: the waiting request must not wait for that run to end.
    m.pool.reporter(0).failed('out of memory');
    const waiting = m.outcomes.get('waiting') as InferenceError;
    expect(waiting).toBeInstanceOf(InferenceError);
    expect(waiting.code).toBe('UNAVAILABLE');
    expect(waiting.message).toBe("model 'm' version 1 request 'waiting': no instance of the model can run: out of memory; device lost");
    m.submit('later');
    expect((m.outcomes.get('later') as InferenceError).code).toBe('UNAVAILABLE');
    await m.instances[0]!.finish();
    expect(m.outcomes.get('running')).toBe('ok');
  });

  it('skips a request cancelled while it waited', async () => {
    const m = attached(1);
    m.pool.reporter(0).recovering('worker died');
    m.submit('a').cancel(new InferenceError('CANCELLED', 'caller gave up'));
    m.submit('b');
    m.pool.reporter(0).restored();
    await m.instances[0]!.finish();
    expect(m.instances[0]!.ran).toEqual(['b']);
  });
});
