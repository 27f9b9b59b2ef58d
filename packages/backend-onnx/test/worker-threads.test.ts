import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { InferenceError, InferenceServer, validateModelConfig } from '@tritium/core';
import type { Tensor } from '@tritium/core';
import { onnxBackend } from '../src/index.js';
import type { OnnxInstance } from '../src/onnx-instance.js';
import { EXECUTION_THREAD_PARAMETER, FITTING_WINDOWS_TO_MOVE, INLINE_MAX_MICROSECONDS, LOOP_HOLD_MAX_MICROSECONDS, MEASURED_RUNS, ThreadChoice, WARMUP_RUNS, WIDE_FROM_MICROSECONDS, WINDOWS_BETWEEN_TRIALS } from '../src/thread-choice.js';
import { ExecutionPool } from '../src/execution-pool.js';
import { InlineLane } from '../src/inline-lane.js';
import type { OnnxSession } from '../src/onnx-session.js';
import { SessionSlot } from '../src/session-slot.js';
import { RuntimeLoader } from '../src/runtime.js';
import { availableParallelism, tmpdir } from 'node:os';
import { DETACHED, fp32, HealthLog, loadDirect, mlpExpected, mlpInput, outputsOf, range, request, TempRepository, useTempRepository } from './helpers.js';
import { ServerHarness } from './server-harness.js';

const param = (key: string, value: string) => `parameters { key: "${key}" value { string_value: "${value}" } }`;

/** The MLP with any number of rows in one run: 2048 rows take some 100 ms or more on one thread. */
const SLOW = (name: string, extra = '') => `name: "${name}"
backend: "onnxruntime"
max_batch_size: 0
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1, 256 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1, 256 ] }
${param('intra_op_thread_count', '1')}
${extra}`;

const slowInput = (rows = 2048) => ({ INPUT0: fp32(mlpInput(rows), [rows, 256]) });
const tinyInput = (x: number) => ({ INPUT0: fp32([x], [1, 1]) });

/** The gaps (ms) between the ticks of a 1 ms interval while `work` runs: how long the event loop was held at a time. */
async function loopGapsDuring(work: () => Promise<unknown>): Promise<number[]> {
  const gaps: number[] = [];
  let last = performance.now();
  const timer = setInterval(() => {
    const now = performance.now();
    gaps.push(now - last);
    last = now;
  }, 1);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return gaps;
}

describe('ONNX runs on worker threads', () => {
  let harness: ServerHarness;
  beforeAll(async () => {
    harness = await ServerHarness.start({
      slow: { artifact: 'mlp', config: SLOW('slow', param(EXECUTION_THREAD_PARAMETER, 'worker')) },
      tiny: { artifact: 'tiny' },
    });
  });
  afterAll(() => harness?.stop());

  test('the event loop keeps turning while a long run is in progress', async () => {
    const start = performance.now();
    const gaps = await loopGapsDuring(() => harness.infer('slow', slowInput()));
    const took = performance.now() - start;
    expect(took).toBeGreaterThan(20);
    // On the loop the run would hold it for its whole length; on a worker the timer keeps firing.
    expect(gaps.length).toBeGreaterThan(5);
    expect(Math.max(...gaps)).toBeLessThan(took / 2);
  });

  test('an abort answers at once while the run goes on, and the model keeps serving', async () => {
    const controller = new AbortController();
    const start = performance.now();
    const running = harness.server.infer('slow', { inputs: slowInput(), signal: controller.signal });
    setTimeout(() => controller.abort(), 3);
    const error = await running.then(
      () => undefined,
      (e: unknown) => e,
    );
    const answeredAfter = performance.now() - start;
    expect(error).toBeInstanceOf(InferenceError);
    expect((error as InferenceError).code).toBe('CANCELLED');
    const full = performance.now();
    await harness.infer('slow', slowInput());
    const fullRun = performance.now() - full;
    expect(answeredAfter).toBeLessThan(fullRun / 2);
    // The aborted run goes on on its pool thread: let it end, so the next test starts with every thread idle.
    await new Promise((resolve) => setTimeout(resolve, 5 * fullRun));
  });

  test('a tiny model is answered while a slow one is busy', async () => {
    let slowDone = false;
    const slow = harness.infer('slow', slowInput()).then(() => (slowDone = true));
    const out = await harness.infer('tiny', tinyInput(41));
    expect(Array.from(out.OUTPUT0!.data as Float32Array)).toEqual([42]);
    expect(slowDone).toBe(false);
    await slow;
  });
});

describe('the thread choice', () => {
  const repo = useTempRepository();
  const backend = onnxBackend();

  /** Runs `count` requests one after another on the instance and returns where the last ran. */
  async function runMany(instance: OnnxInstance, input: Record<string, Tensor>, count: number): Promise<string> {
    for (let i = 0; i < count; i++) outputsOf(await instance.execute([request(input, [])]));
    return instance.thread;
  }

  /** As runMany, then runs again until a run goes inline (the inline session opens in the background) or a second has passed. */
  async function runUntilInline(instance: OnnxInstance, input: Record<string, Tensor>, count: number): Promise<string> {
    await runMany(instance, input, count);
    for (let i = 0; i < 200 && instance.thread === 'worker'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      await runMany(instance, input, 1);
    }
    return instance.thread;
  }

  test('auto runs the tiny model inline after measuring it, a batch too large for the loop on the pool, and times the MLP\'s batch of 64 inline before deciding', async () => {
    const tiny = await loadDirect(backend, repo.current, 'tiny_auto', 'tiny');
    const mlp = await loadDirect(backend, repo.current, 'mlp_auto', 'mlp');
    try {
      const instance = tiny.instances[0] as OnnxInstance;
      expect(instance.thread).toBe('worker');
      expect(await runUntilInline(instance, tinyInput(1), WARMUP_RUNS + MEASURED_RUNS)).toBe('inline');
      expect(outputsOf(await instance.execute([request(tinyInput(2), [])]))[0]!.OUTPUT0!.data).toEqual(new Float32Array([3]));
      // Inline, a run has ended when execute returns (the loop having just turned): its results come back as they are, not as a promise.
      await new Promise((resolve) => setImmediate(resolve));
      const direct = instance.execute([request(tinyInput(5), [])]);
      expect(Array.isArray(direct) && outputsOf(direct)[0]!.OUTPUT0!.data).toEqual(new Float32Array([6]));
      // 2 M rows (8 MiB) is a size of its own, measured on the pool: a run of milliseconds stays there, untried inline.
      const rows = 1 << 21;
      const big = { INPUT0: fp32(new Float32Array(rows).fill(1), [rows, 1]) };
      expect(await runMany(instance, big, WARMUP_RUNS + MEASURED_RUNS + 1)).toBe('worker');
      // Checked by hand: a deep equality over 2 M elements takes seconds.
      const summed = outputsOf(await instance.execute([request(big, [])]))[0]!.OUTPUT0!.data as Float32Array;
      expect([summed.length, summed.every((v) => v === 2)]).toEqual([rows, true]);
      // On a busy machine the tiny model's runs can measure 100 µs and more: it is widened first, then inline as short enough for the loop.
      expect(tiny.model.description).toMatch(/auto, inline for 4 B–8 B of input: (a run costs less than the handoff to a worker|a run is short enough for the event loop) .*; worker threads (with \d+ intra-op threads per session )?for other sizes: [^;]*\(8 MiB–16 MiB of input/);
      // The MLP's batch of 64 takes about a millisecond: too long for the loop as measured on the pool, it is timed inline, and runs where that says.
      const batch64 = { INPUT0: fp32(mlpInput(64), [64, 256]) };
      const mlpInstance = mlp.instances[0] as OnnxInstance;
      const described = () => mlp.model.description ?? '';
      await runMany(mlpInstance, batch64, 2 * (WARMUP_RUNS + MEASURED_RUNS));
      const until = performance.now() + 10_000;
      while (/timing 64 KiB–128 KiB of input inline/.test(described()) && performance.now() < until) await runMany(mlpInstance, batch64, 1);
      const decided = await runMany(mlpInstance, batch64, 1);
      const description = described();
      if (/timed inline: run \d+ µs \(lower quartile\)/.test(description)) {
        expect(description).toMatch(decided === 'inline' ? /inline for 64 KiB–128 KiB of input: a lone run timed inline fits the event loop/ : /worker threads .*for (other sizes|every size): (runs too long to hold the event loop|the pool's round trip is shorter than a run inline) \(64 KiB–128 KiB/);
      } else if (decided === 'worker') {
        // Never timed inline: one core (nothing to widen to), or runs on the pool over twice the loop's budget (a busy machine).
        const onPool = Number(/64 KiB–128 KiB of input: run (\d+) µs/.exec(description)?.[1]);
        if (availableParallelism() >= 2) expect(onPool).toBeGreaterThanOrEqual(2 * LOOP_HOLD_MAX_MICROSECONDS);
      } else {
        // Inline at once: under 400 µs on the widened pool sessions (a fast machine).
        expect(description).toMatch(/inline for [^;]*64 KiB–128 KiB[^;]*: a run is short enough for the event loop/);
      }
    } finally {
      for (const loaded of [tiny, mlp]) {
        await Promise.all(loaded.instances.map((instance) => instance.finalize?.()));
        await loaded.model.finalize?.();
      }
    }
    // The inline sessions opened from graphs optimized on a pool thread, whose files are gone.
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith('tritium-inline-'))).toEqual([]);
  });

  test('inline runs go through onnxruntime-node\'s binding synchronously, and callers that resubmit at once still let the event loop turn', async () => {
    const tiny = await loadDirect(backend, repo.current, 'tiny_loop', 'tiny');
    const instance = tiny.instances[0] as OnnxInstance;
    try {
      expect(await runUntilInline(instance, tinyInput(1), WARMUP_RUNS + MEASURED_RUNS)).toBe('inline');
      const end = performance.now() + 300;
      let runs = 0;
      const caller = async () => {
        while (performance.now() < end) {
          outputsOf(await instance.execute([request(tinyInput(runs), [])]));
          runs++;
        }
      };
      const gaps = await loopGapsDuring(() => Promise.all(range(8).map(caller)));
      expect(instance.thread).toBe('inline');
      expect(runs).toBeGreaterThan(1000);
      // Chained in microtasks, the runs would hold the loop for all 300 ms; it turns every millisecond or so.
      expect(gaps.length).toBeGreaterThan(10);
      expect(Math.max(...gaps)).toBeLessThan(100);
    } finally {
      await instance.finalize?.();
      await tiny.model.finalize?.();
    }
  });

  test('on a cold process (onnxruntime starting up with the first model), the tiny model goes inline and a slow one stays off the loop, and the state says why', async () => {
    const root = fileURLToPath(new URL('../../../', import.meta.url));
    const child = fileURLToPath(new URL('./choose-in-child.ts', import.meta.url));
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', child], { cwd: root });
    type Outcome = { thread: string; description: string };
    const { tiny, slow, logged } = JSON.parse(stdout) as { tiny: Outcome; slow: Outcome; logged: string[] };
    expect(tiny).toMatchObject({ thread: 'inline', description: expect.stringMatching(/auto, inline for 4 B–8 B of input: a run costs less than the handoff to a worker \(4 B–8 B of input: run \d+ µs in onnxruntime \(lower quartile\), handoff to a worker \d+ µs \(median\)\); worker threads for other sizes$/) });
    expect(slow).toMatchObject({ thread: 'worker', description: expect.stringMatching(/auto, worker threads for every size: a run costs more than the handoff \(512 KiB–1 MiB of input/) });
    expect(logged).toEqual([`model 'tiny': ${tiny.description.split('; ').slice(2).join('; ')}`, `model 'mlp': ${slow.description.split('; ').slice(2).join('; ')}`]);
  });

  /** Feeds the choice a size's measured runs, all alike. */
  const measure = (choice: ThreadChoice, inputBytes: number, run: number, handoff: number) => {
    for (let i = 0; i < MEASURED_RUNS; i++) choice.record({ inputBytes, runMicroseconds: run, handoffMicroseconds: handoff });
  };

  test('auto decides each size of input apart: inline when a run costs less than the handoff and fits the loop, else on the pool', () => {
    const logged: string[] = [];
    const choice = new ThreadChoice('auto', (reason) => logged.push(reason));
    expect(choice.thread).toBe('worker');
    measure(choice, 4, 8, 40);
    // 4–7 bytes are one size; 8 is the next, still measured.
    expect([choice.runsInline(4), choice.runsInline(7), choice.runsInline(8), choice.measures(8)]).toEqual([true, true, false, true]);
    measure(choice, 8192, 60, 40);
    measure(choice, 1 << 20, INLINE_MAX_MICROSECONDS + 10, 2000);
    // Sizes on the pool go on being measured.
    expect([choice.runsInline(8192), choice.measures(8192), choice.runsInline(1 << 20)]).toEqual([false, true, false]);
    expect(choice.wantsInline).toBe(true);
    expect(choice.reason).toMatch(/^auto, inline for 4 B–8 B of input: a run costs less than the handoff to a worker \(4 B–8 B of input: run 8 µs .*\); worker threads for other sizes: runs too long to hold the event loop \(1 MiB–2 MiB of input: run 410 µs/);
    expect(logged).toHaveLength(3);
    choice.refuseInline('its optimized model is 20 MiB');
    expect([choice.runsInline(4), choice.wantsInline]).toEqual([false, false]);
    expect(choice.reason).toMatch(/^auto, never inline: its optimized model is 20 MiB; worker threads for every size/);
  });

  test('auto measures a size on the pool again, window after window, and moves it inline once a window fits the loop (a busy machine at the first measure does not keep it there)', () => {
    const logged: string[] = [];
    const choice = new ThreadChoice('auto', (reason) => logged.push(reason), 2);
    // Widened by its first window, then measured on the wider sessions while the machine is busy: too long for the loop.
    measure(choice, 1024, WIDE_FROM_MICROSECONDS + 50, 40);
    measure(choice, 65536, 2 * LOOP_HOLD_MAX_MICROSECONDS + 1000, 100);
    // Too long for the loop as measured on the pool, but maybe not inline: timed there first, and too long there too.
    measure(choice, 1024, INLINE_MAX_MICROSECONDS + 10, 100);
    timeInline(choice, 1024, LOOP_HOLD_MAX_MICROSECONDS + 100);
    expect([choice.runsInline(1024), choice.measures(1024)]).toEqual([false, true]);
    expect(logged.at(-1)).toMatch(/for every size: runs too long to hold the event loop \(1 KiB–2 KiB of input: run 410 µs .*; timed inline: run 1600 µs/);
    // Still busy: it stays, and nothing new is said.
    measure(choice, 1024, INLINE_MAX_MICROSECONDS + 200, 100);
    expect([choice.runsInline(1024), choice.timesInline(1024), logged.length]).toEqual([false, false, 4]);
    // Fitting windows must come in a row: a busy one in between starts the count again.
    for (let i = 0; i < FITTING_WINDOWS_TO_MOVE - 1; i++) measure(choice, 1024, 150, 100);
    measure(choice, 1024, INLINE_MAX_MICROSECONDS + 200, 100);
    for (let i = 0; i < FITTING_WINDOWS_TO_MOVE - 1; i++) measure(choice, 1024, 150, 100);
    expect(choice.runsInline(1024)).toBe(false);
    // Quiet again for long enough: it goes inline, where it stays.
    measure(choice, 1024, 150, 100);
    expect([choice.runsInline(1024), choice.measures(1024), choice.wantsInline, choice.inlineIntraOpThreads]).toEqual([true, false, true, 2]);
    // The pool's reason was this size's; the size still there gives its own.
    expect(logged.at(-1)).toMatch(/^auto, inline for 1 KiB–2 KiB of input: a run is short enough for the event loop \(1 KiB–2 KiB of input: run 150 µs.*\); worker threads with 2 intra-op threads per session for other sizes: runs too long to hold the event loop \(64 KiB–128 KiB of input/);
    measure(choice, 1024, INLINE_MAX_MICROSECONDS + 200, 100);
    expect(choice.runsInline(1024)).toBe(true);
  });

  /** A choice whose model was widened to 2 intra-op threads by a first window of 1 KiB inputs. */
  const widened = (onDecided?: (reason: string) => void) => {
    const choice = new ThreadChoice('auto', onDecided, 2);
    measure(choice, 1024, WIDE_FROM_MICROSECONDS + 50, 40);
    return choice;
  };

  /** Feeds the choice a size's runs timed inline: the warm-up ones, then a window, all alike. */
  const timeInline = (choice: ThreadChoice, inputBytes: number, run: number | undefined) => {
    for (let i = 0; i < WARMUP_RUNS + MEASURED_RUNS; i++) choice.recordInline(inputBytes, run);
  };

  test('auto times inline a size too long for the loop as measured on the pool, keeps it inline while it fits there and beats the round trip, and times it again later when it did not', () => {
    const logged: string[] = [];
    const choice = widened((reason) => logged.push(reason));
    // A batch takes 1.7 ms on the pool's sleeping threads, 2 ms with the handoff.
    measure(choice, 65536, 1700, 300);
    expect([choice.timesInline(65536), choice.runsInline(65536), choice.wantsInline, choice.inlineIntraOpThreads]).toEqual([true, true, true, 2]);
    expect(logged.at(-1)).toMatch(/^auto, timing 64 KiB–128 KiB of input inline before deciding; worker threads with 2 intra-op threads per session for other sizes/);
    // Runs on the pool while the inline session opens change nothing; the warm-up runs inline do not count.
    measure(choice, 65536, 5000, 300);
    for (let i = 0; i < WARMUP_RUNS; i++) choice.recordInline(65536, 9000);
    for (let i = 0; i < MEASURED_RUNS; i++) choice.recordInline(65536, 1200);
    // Inline now, and still timed there.
    expect([choice.runsInline(65536), choice.timesInline(65536), choice.measures(65536)]).toEqual([true, true, false]);
    expect(logged.at(-1)).toMatch(/^auto, inline for 64 KiB–128 KiB of input: a lone run timed inline fits the event loop and is shorter than the round trip to a worker; while other requests wait or run, runs go to worker threads \(64 KiB–128 KiB of input: run 1700 µs .*; timed inline: run 1200 µs \(lower quartile\)\)/);
    // The machine slows: it leaves the loop only after windows in a row too long for it.
    const window = (run: number) => {
      for (let i = 0; i < MEASURED_RUNS; i++) choice.recordInline(65536, run);
    };
    for (let i = 0; i < FITTING_WINDOWS_TO_MOVE - 1; i++) window(LOOP_HOLD_MAX_MICROSECONDS + 100);
    window(1200);
    for (let i = 0; i < FITTING_WINDOWS_TO_MOVE - 1; i++) window(LOOP_HOLD_MAX_MICROSECONDS + 100);
    expect(choice.runsInline(65536)).toBe(true);
    window(LOOP_HOLD_MAX_MICROSECONDS + 100);
    expect([choice.runsInline(65536), choice.timesInline(65536), choice.measures(65536)]).toEqual([false, false, true]);
    expect(logged.at(-1)).toMatch(/for every size: runs too long to hold the event loop \(64 KiB–128 KiB of input: .*timed inline: run 1600 µs/);

    // Too long inline: back to the pool, timed inline again after WINDOWS_BETWEEN_TRIALS windows there, then after twice as many.
    const long = widened();
    measure(long, 65536, 1700, 300);
    expect(long.inlineIntraOpThreads).toBe(2);
    timeInline(long, 65536, LOOP_HOLD_MAX_MICROSECONDS + 1);
    expect([long.runsInline(65536), long.timesInline(65536), long.wantsInline]).toEqual([false, false, false]);
    expect(long.reason).toMatch(/for every size: runs too long to hold the event loop \(.*timed inline: run 1501 µs/);
    // The inline session stays as wide as it was opened for the trial: reopening it would hold the loop.
    expect(long.inlineIntraOpThreads).toBe(2);
    const windowsUntilTimed = () => {
      let windows = 0;
      while (!long.timesInline(65536) && windows < 1000) {
        measure(long, 65536, 1700, 300);
        windows++;
      }
      return windows;
    };
    expect(windowsUntilTimed()).toBe(WINDOWS_BETWEEN_TRIALS);
    timeInline(long, 65536, LOOP_HOLD_MAX_MICROSECONDS + 1);
    expect(windowsUntilTimed()).toBe(2 * WINDOWS_BETWEEN_TRIALS);
    // A window that fits the loop on the pool counts towards moving inline, and starts no timing.
    timeInline(long, 65536, LOOP_HOLD_MAX_MICROSECONDS + 1);
    for (let i = 0; i < 4 * WINDOWS_BETWEEN_TRIALS - 1; i++) measure(long, 65536, 1700, 300);
    measure(long, 65536, INLINE_MAX_MICROSECONDS - 100, 300);
    expect([long.timesInline(65536), long.runsInline(65536)]).toEqual([false, false]);
    measure(long, 65536, 1700, 300);
    expect([long.timesInline(65536), long.runsInline(65536)]).toEqual([true, true]);
    timeInline(long, 65536, 1100);
    expect(long.reason).toMatch(/^auto, inline for 64 KiB–128 KiB of input: a lone run timed inline fits the event loop .*timed inline: run 1100 µs/);
    // Fits the loop, but the pool's round trip (run and handoff, as measured) is shorter.
    const quick = widened();
    measure(quick, 65536, 700, 50);
    timeInline(quick, 65536, 800);
    expect([quick.runsInline(65536), quick.reason]).toEqual([false, expect.stringMatching(/the pool's round trip is shorter than a run inline \(.*run 800 µs \(lower quartile\), round trip 750 µs\)/)]);
    // An inline session that does not time its runs (onnxruntime-web's public API) ends the trial.
    const untimed = widened();
    measure(untimed, 65536, 700, 2000);
    timeInline(untimed, 65536, undefined);
    expect([untimed.runsInline(65536), untimed.reason]).toEqual([false, expect.stringMatching(/its inline session does not time its runs/)]);
    // ... and no size is timed inline again: it never could be.
    for (let i = 0; i < 4 * WINDOWS_BETWEEN_TRIALS; i++) measure(untimed, 65536, 700, 2000);
    expect(untimed.timesInline(65536)).toBe(false);
    // An inline session that cannot be opened ends it too.
    const refused = widened();
    measure(refused, 65536, 700, 2000);
    refused.refuseInline('its optimized model is 20 MiB');
    expect([refused.runsInline(65536), refused.timesInline(65536), refused.wantsInline]).toEqual([false, false, false]);
    expect(refused.reason).toMatch(/^auto, never inline: its optimized model is 20 MiB; worker threads with 2 intra-op threads per session for every size: runs too long to hold the event loop \(64 KiB–128 KiB of input: run 700 µs/);
    // Not widened (one intra-op thread): the pool's threads are what run several at once, so a long size is not tried inline.
    const narrow = new ThreadChoice('auto');
    measure(narrow, 65536, 1700, 2000);
    expect([narrow.timesInline(65536), narrow.runsInline(65536)]).toEqual([false, false]);
  });

  test('auto gives a size whose runs hold the loop the event loop only for a lone run: while other requests of the model wait or run, the pool', () => {
    const choice = widened();
    measure(choice, 1024, 40, 300);
    measure(choice, 65536, 1700, 300);
    // A trial times every run inline, overlapping or not, so that it decides under any load.
    expect([choice.runsInline(65536, true), choice.runsInline(65536, false), choice.timesInline(65536)]).toEqual([true, true, true]);
    timeInline(choice, 65536, 1200);
    expect(choice.reason).toMatch(/^auto, inline for 1 KiB–2 KiB, 64 KiB–128 KiB of input: a lone run timed inline fits the event loop .*; while other requests wait or run, runs go to worker threads/);
    // Inline by its trial, 1.2 ms a run: only when alone. A short size inline runs there either way.
    expect([choice.runsInline(65536, true), choice.runsInline(65536, false)]).toEqual([true, false]);
    expect([choice.runsInline(1024, true), choice.runsInline(1024, false)]).toEqual([true, true]);
    // A trial whose runs inline are short (the MLP's batch of 1 measured slow on the pool): inline for overlapping runs too.
    const short = widened();
    measure(short, 1024, INLINE_MAX_MICROSECONDS + 50, 300);
    expect(short.timesInline(1024)).toBe(true);
    timeInline(short, 1024, INLINE_MAX_MICROSECONDS - 150);
    expect([short.runsInline(1024, true), short.runsInline(1024, false)]).toEqual([true, true]);
    expect(short.reason).toMatch(/^auto, inline for 1 KiB–2 KiB of input: a run timed inline fits the event loop and is shorter than the round trip to a worker \(/);
  });

  test('a slot gives such a size the event loop only for a run that serves every request the model has in flight', async () => {
    const choice = widened();
    measure(choice, 65536, 1700, 300);
    timeInline(choice, 65536, 1200);
    const ranOn: string[] = [];
    const pooled: OnnxSession = {
      thread: 'worker',
      metadata: { inputMetadata: [], outputMetadata: [] },
      run: async () => (ranOn.push('worker'), { outputs: {} }),
      release: async () => {},
      onLost: () => () => {},
    };
    // The lane as the slot sees it once open at the chosen width; its runs take 1.2 ms, as timed above.
    const lane = { ready: true, atChosenWidth: true, follow: () => {}, run: async () => (ranOn.push('inline'), { outputs: {}, runMicroseconds: 1200 }) };
    let inFlight = 1;
    const slot = new SessionSlot(pooled, 2, async () => pooled, choice, "model 'm'", () => inFlight, lane as unknown as InlineLane);
    const feeds = { INPUT0: { type: 'float32', data: new Float32Array(16384), dims: [64, 256] } };
    // The model's only request: inline. Seven more waiting: the pool, though no other run is under way
    // (each run inline ends before the next starts, so runs under way would never tell). A batch of all eight: inline.
    await slot.run(feeds, ['OUTPUT0'], 1);
    inFlight = 8;
    await slot.run(feeds, ['OUTPUT0'], 1);
    await slot.run(feeds, ['OUTPUT0'], 8);
    expect(ranOn).toEqual(['inline', 'worker', 'inline']);
  });

  test('an auto model compares the server\'s count of requests in flight with the requests its execution serves: not cancelled ones, nor a sequence batch\'s empty slots', async () => {
    const asked: number[] = [];
    const inFlight = () => (asked.push(1), 7);
    const slotRuns = vi.spyOn(SessionSlot.prototype, 'run');
    const tiny = await loadDirect(backend, repo.current, 'tiny_served', 'tiny', {}, 1, inFlight);
    const accumulator = await loadDirect(backend, repo.current, 'accumulator_served', 'accumulator', {
      max_batch_size: 4,
      input: [{ name: 'INPUT', data_type: 'TYPE_FP32', dims: [1] }],
      output: [{ name: 'OUTPUT', data_type: 'TYPE_FP32', dims: [1] }],
      sequence_batching: { state: [{ input_name: 'INPUT_STATE', output_name: 'OUTPUT_STATE', data_type: 'TYPE_FP32', dims: [1] }] },
    }, 1, inFlight);
    try {
      const served = () => slotRuns.mock.calls.at(-1)![2];
      await tiny.instances[0]!.execute([request(tinyInput(1), []), request(tinyInput(2), [], { cancelled: true }), request(tinyInput(3), [])]);
      expect([served(), asked.length]).toEqual([2, 1]);
      const step = (value: number, sequence?: { id: number }) => ({ ...request({ INPUT: fp32([value], [1, 1]), INPUT_STATE: fp32([0], [1, 1]) }, ['OUTPUT', 'OUTPUT_STATE']), sequence });
      // A direct batch: one sequence's request and an empty slot (no sequence), as the sequence batcher pads it.
      await accumulator.instances[0]!.execute([step(2, { id: 1 }), step(0)]);
      expect([served(), asked.length]).toEqual([1, 2]);
    } finally {
      slotRuns.mockRestore();
      for (const loaded of [tiny, accumulator]) {
        await Promise.all(loaded.instances.map((instance) => instance.finalize?.()));
        await loaded.model.finalize?.();
      }
    }
  });

  test('auto widens a model whose runs are long enough to split, measures every size again on the wider sessions, and sends the short ones inline', () => {
    const choice = new ThreadChoice('auto', undefined, 4);
    measure(choice, 1024, WIDE_FROM_MICROSECONDS + 50, 40);
    expect([choice.intraOpThreads, choice.measures(1024), choice.wantsInline]).toEqual([4, true, false]);
    // On wider sessions a run above the handoff still runs inline when it fits the loop: the inline session has the cores too.
    measure(choice, 1024, WIDE_FROM_MICROSECONDS + 50, 40);
    measure(choice, 65536, 2 * LOOP_HOLD_MAX_MICROSECONDS + 100, 40);
    expect([choice.runsInline(1024), choice.runsInline(65536)]).toEqual([true, false]);
    expect(choice.reason).toMatch(/^auto, inline for 1 KiB–2 KiB of input: a run is short enough for the event loop .*; worker threads with 4 intra-op threads per session for other sizes/);
    // No widening offered (the config sets intra_op_thread_count, or one core): a run above the handoff stays on the pool.
    const narrow = new ThreadChoice('auto');
    measure(narrow, 1024, WIDE_FROM_MICROSECONDS + 50, 40);
    expect([narrow.intraOpThreads, narrow.runsInline(1024), narrow.measures(1024)]).toEqual([undefined, false, true]);
    // Fixed choices measure nothing and never widen.
    const fixed = new ThreadChoice('worker', undefined, 4);
    measure(fixed, 1024, 8, 40);
    expect([fixed.thread, fixed.measures(1024), fixed.runsInline(1024), fixed.intraOpThreads]).toEqual(['worker', false, false, undefined]);
  });

  test('auto narrows a widened model\'s pooled sessions while most of its runs overlap, and widens them again once they do not, waiting longer each time', () => {
    const logged: string[] = [];
    const choice = widened((reason) => logged.push(reason));
    const windows = (count: number, alone: boolean) => {
      for (let i = 0; i < count * MEASURED_RUNS; i++) choice.recordPoolRun(alone);
    };
    // A window of lone runs between overlapping ones starts the count again.
    windows(FITTING_WINDOWS_TO_MOVE - 1, false);
    windows(1, true);
    windows(FITTING_WINDOWS_TO_MOVE - 1, false);
    expect(choice.intraOpThreads).toBe(2);
    windows(1, false);
    expect(choice.intraOpThreads).toBeUndefined();
    expect(logged.at(-1)).toMatch(/worker threads with the pool's intra-op threads per session while runs overlap \(2 when they do not\)/);
    // Wide again, after twice as many windows of lone runs.
    windows(2 * FITTING_WINDOWS_TO_MOVE - 1, true);
    expect(choice.intraOpThreads).toBeUndefined();
    windows(1, true);
    expect(choice.intraOpThreads).toBe(2);
    expect(logged.at(-1)).toMatch(/worker threads with 2 intra-op threads per session/);
    // A model never widened has nothing to narrow.
    const narrow = new ThreadChoice('auto');
    for (let i = 0; i < 4 * FITTING_WINDOWS_TO_MOVE * MEASURED_RUNS; i++) narrow.recordPoolRun(false);
    expect([narrow.intraOpThreads, narrow.reason]).toEqual([undefined, new ThreadChoice('auto').reason]);
  });

  test('the inline session opens when a size goes inline, and again with the cores when the model widens', async () => {
    const files = await repo.current.addModel('lane', 'mlp');
    const runtime = await new RuntimeLoader().loadNative();
    const pool = new ExecutionPool(1);
    const choice = new ThreadChoice('auto', undefined, 2);
    const spec = { runtime, modelFile: files.modelPath, modelName: 'lane', options: { intraOpNumThreads: 1, logSeverityLevel: 3 as const }, pool, group: 'lane' };
    const lane = new InlineLane(spec, choice);
    const expected = await mlpExpected();
    const input = { INPUT0: { type: 'float32', data: mlpInput(expected.batch), dims: [expected.batch, 256] } };
    const opened = async () => {
      for (let i = 0; i < 400 && !lane.ready; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      const { outputs } = await lane.run(input, ['OUTPUT0']);
      expect(Array.from(outputs.OUTPUT0!.data as Float32Array).every((v, i) => Math.abs(v - expected.output[i]!) < 1e-4)).toBe(true);
    };
    try {
      lane.follow();
      expect(lane.ready).toBe(false);
      measure(choice, 2048, 50, 80);
      lane.follow();
      await opened();
      const narrowThreads = threadCount();
      // Widening keeps the sizes inline where they are, on the session as it is.
      measure(choice, 65536, WIDE_FROM_MICROSECONDS + 50, 80);
      lane.follow();
      expect([choice.intraOpThreads, choice.inlineIntraOpThreads, threadCount()]).toEqual([2, undefined, narrowThreads]);
      // Measured on the wider sessions, a size that goes inline needs their threads inline too.
      measure(choice, 16384, 150, 80);
      lane.follow();
      for (let i = 0; i < 400 && threadCount() === narrowThreads; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      // One more onnxruntime thread: the inline session's two intra-op threads are the loop's own and one more.
      expect(threadCount()).toBe(narrowThreads + 1);
      await opened();
    } finally {
      await lane.release();
    }
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith('tritium-inline-'))).toEqual([]);
  });

  test('a widened model runs on sessions with more intra-op threads, answers the same, and its state says so once decided', async (context) => {
    const cores = availableParallelism();
    if (cores < 2) return context.skip(`one core (availableParallelism() is ${cores}): there is nothing to widen to`);
    const config = `max_batch_size: 0
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1, 256 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1, 256 ] }`;
    const harness = await ServerHarness.start({ wide: { artifact: 'mlp', config } });
    try {
      expect((await harness.state('wide')).reason).toMatch(/auto: on worker threads while its first runs are measured/);
      const threads = () => readdirSync('/proc/self/task').length;
      const before = threads();
      const expected = await mlpExpected();
      const input = { INPUT0: fp32(mlpInput(expected.batch), [expected.batch, 256]) };
      for (let i = 0; i < WARMUP_RUNS + MEASURED_RUNS + 4; i++) await harness.infer('wide', { INPUT0: fp32(mlpInput(64), [64, 256]) });
      // The move opens the wide sessions in the background.
      for (let i = 0; i < 200 && threads() < before + cores - 1; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect((await harness.state('wide')).reason).toMatch(new RegExp(`auto, worker threads with ${cores} intra-op threads per session`));
      // Each instance's session now has cores - 1 threads of onnxruntime's beside its pool thread.
      expect(threads()).toBeGreaterThanOrEqual(before + cores - 1);
      const output = (await harness.infer('wide', input)).OUTPUT0!;
      expect(Array.from(output.data as Float32Array).every((v, i) => Math.abs(v - expected.output[i]!) < 1e-4)).toBe(true);
    } finally {
      await harness.stop();
    }
  });

  test('the parameter fixes the thread, and a wrong value is refused naming it', async () => {
    const inline = await loadDirect(backend, repo.current, 'tiny_inline', 'tiny', { parameters: { [EXECUTION_THREAD_PARAMETER]: { string_value: 'inline' } } });
    const worker = await loadDirect(backend, repo.current, 'tiny_worker', 'tiny', { parameters: { [EXECUTION_THREAD_PARAMETER]: { string_value: 'worker' } } });
    try {
      expect((inline.instances[0] as OnnxInstance).thread).toBe('inline');
      expect(await runMany(worker.instances[0] as OnnxInstance, tinyInput(1), WARMUP_RUNS + MEASURED_RUNS + 2)).toBe('worker');
    } finally {
      for (const loaded of [inline, worker]) {
        await Promise.all(loaded.instances.map((instance) => instance.finalize?.()));
        await loaded.model.finalize?.();
      }
    }
    const refused = await loadDirect(backend, repo.current, 'tiny_bad', 'tiny', { parameters: { [EXECUTION_THREAD_PARAMETER]: { string_value: 'gpu' } } }).then(
      () => undefined,
      (e: unknown) => e as InferenceError,
    );
    expect(refused?.code).toBe('INVALID_ARG');
    expect(refused?.message).toMatch(/parameter 'execution_thread' is 'gpu'/);
  });
});

describe('sessions and inputs crossing', () => {
  const repo = useTempRepository();

  test('instances created at once share one session when asked to', async () => {
    const backend = onnxBackend();
    const files = await repo.current.addModel('shared3', 'tiny');
    const config = validateModelConfig({
      name: 'shared3',
      backend: 'onnxruntime',
      max_batch_size: 4,
      input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [1] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [1] }],
      parameters: { share_session_between_instances: { string_value: 'true' } },
    });
    const model = await backend.createModel({ ...files, name: 'shared3', config, ...DETACHED });
    const instances = await Promise.all(range(3).map((i) => model.createInstance({ name: `shared3_${i}`, kind: 'KIND_CPU', health: new HealthLog() })));
    expect((model as unknown as { slots: unknown[] }).slots).toHaveLength(1);
    const outputs = await Promise.all(instances.map((instance, i) => instance.execute([request(tinyInput(i), [])])));
    expect(outputs.map((result) => outputsOf(result)[0]!.OUTPUT0!.data)).toEqual(range(3).map((i) => new Float32Array([i + 1])));
    await Promise.all(instances.map((instance) => instance.finalize?.()));
    await model.finalize?.();
  });

  test("a caller's view into a larger buffer (a pooled Node Buffer) crosses as its own bytes, without warnings", async () => {
    const warnings = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const loaded = await loadDirect(onnxBackend(), repo.current, 'bytes_w', 'identity_uint8', { parameters: { [EXECUTION_THREAD_PARAMETER]: { string_value: 'worker' } } });
    try {
      const data = Buffer.from([7, 8, 9]);
      expect(data.byteLength).toBeLessThan(data.buffer.byteLength);
      const [out] = outputsOf(await loaded.instances[0]!.execute([request({ INPUT0: { datatype: 'UINT8', shape: [1, 3], data } }, [])]));
      expect(Array.from(out!.OUTPUT0!.data as Uint8Array)).toEqual([7, 8, 9]);
      expect(warnings).not.toHaveBeenCalled();
    } finally {
      warnings.mockRestore();
      await loaded.instances[0]!.finalize?.();
      await loaded.model.finalize?.();
    }
  });
  test('inputs from 16 KB up cross through reused shared buffers, each run reading its own values', async () => {
    const loaded = await loadDirect(onnxBackend(), repo.current, 'big_w', 'identity_fp32', { parameters: { [EXECUTION_THREAD_PARAMETER]: { string_value: 'worker' } } });
    try {
      for (const [round, length] of [8192, 8192, 5000, 70000].entries()) {
        // A view into a larger buffer, as a caller's may be.
        const backing = new Float32Array(length + 16);
        const data = backing.subarray(8, 8 + length);
        for (let i = 0; i < length; i++) data[i] = round * 1e5 + i;
        const [out] = outputsOf(await loaded.instances[0]!.execute([request({ INPUT0: { datatype: 'FP32', shape: [1, length], data } }, [])]));
        expect(out!.OUTPUT0!.data).toEqual(data);
      }
    } finally {
      await loaded.instances[0]!.finalize?.();
      await loaded.model.finalize?.();
    }
  });
});

describe('a worker that dies', () => {
  test('fails its requests with UNAVAILABLE, is replaced, and the model keeps serving', async () => {
    // A small heap for each worker: a request far larger than it kills the worker.
    const harness = await ServerHarness.start(
      { strings: { artifact: 'identity_string', config: `name: "strings"\nbackend: "onnxruntime"\nmax_batch_size: 0\ninput { name: "INPUT0" data_type: TYPE_STRING dims: [ -1, -1 ] }\noutput { name: "OUTPUT0" data_type: TYPE_STRING dims: [ -1, -1 ] }\n${param(EXECUTION_THREAD_PARAMETER, 'worker')}` } },
      { workerResourceLimits: { maxOldGenerationSizeMb: 16, maxYoungGenerationSizeMb: 4 } },
    );
    try {
      const small = { INPUT0: { datatype: 'BYTES' as const, shape: [1, 2], data: ['a', 'b'] } };
      expect((await harness.infer('strings', small)).OUTPUT0!.data).toEqual(['a', 'b']);
      const big = 'x'.repeat(1 << 20);
      const huge = { INPUT0: { datatype: 'BYTES' as const, shape: [1, 64], data: Array(64).fill(big) } };
      const error = await harness.infer('strings', huge).then(
        () => undefined,
        (e: unknown) => e as InferenceError,
      );
      expect(error?.code).toBe('UNAVAILABLE');
      expect(error?.message).toMatch(/model 'strings'.*worker thread/);
      // The replacement serves: requests wait for it rather than fail.
      expect((await harness.infer('strings', small)).OUTPUT0!.data).toEqual(['a', 'b']);
      expect((await harness.state('strings')).state).toBe('READY');
    } finally {
      await harness.stop();
    }
  });

  test('an instance reports recovering, then restored, to the server', async () => {
    const repo = await TempRepository.create();
    try {
      const loaded = await loadDirect(onnxBackend(), repo, 'tiny_w', 'tiny', { parameters: { [EXECUTION_THREAD_PARAMETER]: { string_value: 'worker' } } });
      const instance = loaded.instances[0] as OnnxInstance;
      const health = (instance as unknown as { slot: { users: HealthLog[]; current: { host: { worker: { terminate(): Promise<number> } } } } }).slot;
      // Kill the thread from outside, as a crash would.
      await health.current.host.worker.terminate();
      for (let i = 0; i < 200 && health.users[0]!.reports.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(health.users[0]!.reports).toEqual([expect.stringMatching(/^recovering: its worker thread exited with code 1/), 'restored']);
      expect(outputsOf(await instance.execute([request(tinyInput(4), [])]))[0]!.OUTPUT0!.data).toEqual(new Float32Array([5]));
      await instance.finalize?.();
      await loaded.model.finalize?.();
    } finally {
      await repo.cleanup();
    }
  });
});

describe('the execution pool', () => {
  test('executionThreads sizes it: with one thread, a model\'s two instances share it and both serve; a size below one is refused', async () => {
    expect(() => onnxBackend({ executionThreads: 0 })).toThrow(/executionThreads must be a whole number >= 1, not 0/);
    const repo = await TempRepository.create();
    try {
      const param = { [EXECUTION_THREAD_PARAMETER]: { string_value: 'worker' } };
      const loaded = await loadDirect(onnxBackend({ executionThreads: 1 }), repo, 'one_thread', 'tiny', { parameters: param }, 2);
      const hosts = loaded.instances.map((instance) => (instance as unknown as { slot: { current: { host: unknown } } }).slot.current.host);
      expect(hosts[0]).toBe(hosts[1]);
      const outputs = await Promise.all(loaded.instances.map((instance, i) => instance.execute([request(tinyInput(i), [])])));
      expect(outputs.map((result) => outputsOf(result)[0]!.OUTPUT0!.data)).toEqual([new Float32Array([1]), new Float32Array([2])]);
      await Promise.all(loaded.instances.map((instance) => instance.finalize?.()));
      await loaded.model.finalize?.();
    } finally {
      await repo.cleanup();
    }
  });

  test('models cost their sessions, not threads: 20 more tiny models add no thread and little memory', async () => {
    const root = fileURLToPath(new URL('../../../', import.meta.url));
    const child = fileURLToPath(new URL('./load-many-in-child.ts', import.meta.url));
    const perStep = 20;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', child, String(perStep)], { cwd: root });
    const { steps, answer } = JSON.parse(stdout) as { steps: Array<{ threads: number; rss: number }>; answer: number[] };
    expect(answer).toEqual([2]);
    // 40 models of two instances each, 80 sessions: the pool's threads (one per core) and no more.
    expect(steps[1]!.threads).toBe(steps[0]!.threads);
    // Some 0.3 MB a model here (20 MB when each instance was a worker); the bound leaves room for a busy machine's noise.
    expect((steps[1]!.rss - steps[0]!.rss) / perStep).toBeLessThan(4 * 2 ** 20);
  });
});

/** The threads of this process (Linux): workers and onnxruntime's pools included. */
function threadCount(): number {
  return readdirSync('/proc/self/task').length;
}

describe('churn', () => {
  test('repeated loads and unloads of several workers under concurrent runs (onnxruntime #24486), and stop() ends every thread', async () => {
    const repo = await TempRepository.create();
    const before = threadCount();
    await repo.addModel('tiny', 'tiny', { config: `name: "tiny"\nbackend: "onnxruntime"\nmax_batch_size: 8\ninput { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] }\noutput { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] }\ninstance_group [ { count: 4 kind: KIND_CPU } ]\n${param(EXECUTION_THREAD_PARAMETER, 'worker')}` });
    await repo.addModel('steady', 'tiny', { config: `name: "steady"\nbackend: "onnxruntime"\nmax_batch_size: 8\ninput { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] }\noutput { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] }\ninstance_group [ { count: 2 kind: KIND_CPU } ]\n${param(EXECUTION_THREAD_PARAMETER, 'worker')}` });
    const server = await InferenceServer.start({ modelRepository: repo.root, modelControlMode: 'explicit', startupModels: ['steady'], backends: [onnxBackend()] });
    const check = async (model: string, x: number) => {
      const { outputs } = await server.infer(model, { inputs: tinyInput(x) });
      expect(outputs.OUTPUT0!.data).toEqual(new Float32Array([x + 1]));
    };
    try {
      let steadyRuns = 0;
      let churning = true;
      const steady = (async () => {
        while (churning) {
          await Promise.all(range(4).map((i) => check('steady', i)));
          steadyRuns += 4;
        }
      })();
      for (let cycle = 0; cycle < 12; cycle++) {
        await server.loadModel('tiny');
        await Promise.all(range(16).map((i) => check('tiny', cycle * 100 + i)));
        await server.unloadModel('tiny');
      }
      churning = false;
      await steady;
      expect(steadyRuns).toBeGreaterThan(0);
    } finally {
      await server.stop();
      await repo.cleanup();
    }
    // Workers end asynchronously after terminate(); give them a moment.
    for (let i = 0; i < 100 && threadCount() > before; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(threadCount()).toBeLessThanOrEqual(before);
  });
});
