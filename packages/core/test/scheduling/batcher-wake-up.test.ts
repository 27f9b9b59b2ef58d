import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { testConfig } from '../helpers/repository.js';
import { useServerFixture } from '../helpers/server-fixture.js';
import { newProbe, sleep } from '../helpers/test-backend.js';

// Issue 18's lost wake-up: a batcher that reads the clock twice for one decision can see
// "wait" then "ready now" and arm no timer, so a lone request waits for the next one. A
// clock that moves 1 µs on every read makes the queue delay expire between some pair of
// reads; the models' delays (1..12 µs) put that expiry at each read in turn.
const fx = useServerFixture();
const DELAYS = Array.from({ length: 12 }, (_, i) => i + 1);

afterEach(() => vi.restoreAllMocks());

function stepClockOnEveryRead(): void {
  let microseconds = performance.now() * 1000;
  vi.spyOn(performance, 'now').mockImplementation(() => (microseconds += 1) / 1000);
}

/** Resolves to 'answered' or, after `ms` of real time, 'hung'. */
function answeredWithin(request: Promise<unknown>, ms: number): Promise<'answered' | 'hung'> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), ms)));
  return Promise.race([request.then(() => 'answered' as const), hung]).finally(() => clearTimeout(timer));
}

describe('batcher wake-up with a clock that moves between reads', () => {
  it('dynamic batcher: a lone request is answered whichever read the queue delay expires at', async () => {
    const models = Object.fromEntries(
      DELAYS.map((delay) => [`m${delay}`, { config: testConfig({ name: `m${delay}`, maxBatchSize: 8, extra: `dynamic_batching { max_queue_delay_microseconds: ${delay} }` }) }]),
    );
    const server = await fx.start(models);
    const input = { INPUT0: { datatype: 'FP32' as const, shape: [1, 4], data: new Float32Array(4) } };
    const outcomes: string[] = [];
    for (const delay of DELAYS) {
      stepClockOnEveryRead();
      outcomes.push(`${delay} µs: ${await answeredWithin(server.infer(`m${delay}`, { inputs: input }), 1000)}`);
      vi.restoreAllMocks();
    }
    expect(outcomes).toEqual(DELAYS.map((delay) => `${delay} µs: answered`));
  });

  it('sequence batcher: an instance that leaves service while its batch waits for the delay wakes nothing until it is back', async () => {
    // Its wait passes while it is out; a wake-up left for it would fire again and again (it was
    // a synchronous recursion that overflowed the stack and killed the process).
    const probe = newProbe();
    const extra = `sequence_batching { oldest { max_candidate_sequences: 4 preferred_batch_size: [ 4 ] max_queue_delay_microseconds: 20000 } max_sequence_idle_microseconds: 10000000 }`;
    const server = await fx.start({ seq: { config: testConfig({ maxBatchSize: 4, extra }) } }, { exitTimeoutMs: 100 }, probe);
    const [health] = Object.values(probe.health);
    const input = { INPUT0: { datatype: 'FP32' as const, shape: [1, 4], data: new Float32Array(4) } };
    const answer = server.infer('seq', { inputs: input, sequence: { id: 1, start: true } });
    await sleep(1);
    health!.recovering('worker died');
    const wakes = vi.spyOn(globalThis, 'setImmediate');
    await sleep(60);
    expect(wakes.mock.calls.length).toBeLessThan(10);
    health!.restored();
    expect(await answeredWithin(answer, 1000)).toBe('answered');
  });
});
