/**
 * In-process speed against raw onnxruntime-node (issue 19). The same model files go
 * through server.infer() in the default configuration (no instance_group, no
 * execution_thread) and through onnxruntime-node's own session.run (a new ort.Tensor per
 * call, default session options), in one process and run, in alternating rounds. Figures
 * are medians over rounds; ratios are medians of per-round ratios with their range (min–max).
 * 1. 1 caller at batch 1, tiny (x + 1) and the MLP: req/s, p50, CPU per request
 *    (process.cpuUsage: user + system, every thread).
 * 2. 64 callers at batch 1 (default scheduler) against 64 callers of raw session.run
 *    (a naive Promise.all).
 * 3. `dynamic_batching { }`, 64 callers of batch 1, against a hand-written batch-64 loop
 *    on raw (gather 64 rows, one run, split the output); p99 against the naive raw run's;
 *    and, for scale, a hand-written promise batcher (64 callers awaiting their rows).
 * 4. The MLP, one batch-64 request at a time.
 * 5. FOOTPRINT_MODELS (200) tiny models loaded with default configs against as many raw
 *    sessions, each side in a fresh child process: RSS and load time per model, threads
 *    (/proc/self/task) before, half-way, loaded, and after unloading. It runs last.
 * 6. A 64 MB FP32 identity, one request.
 * 7. Event-loop delay (monitorEventLoopDelay) and mark-compacts under sustained MLP load,
 *    against raw's (8 callers, and 1 caller letting the loop turn before each run); how
 *    soon a request cancelled during a ~6 ms run is answered.
 * Then one line per target of the issue: MET or MISSED. Each section stands alone: one
 * that fails is reported and the rest still run.
 * Run: npx -y pnpm@10.34.9 bench:inprocess
 *   ROUNDS=5 (or --rounds=5): recorded rounds per comparison, after one warm-up round;
 *   SECTIONS=1,2,3,4,5,6,7: which sections; FOOTPRINT_MODELS=200.
 */
import { execFileSync, fork } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { cp, rm } from 'node:fs/promises';
import { availableParallelism, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';
import { InferenceError, InferenceServer } from '@tritium/core';
import { onnxBackend } from '@tritium/backend-onnx';
import { alternateRounds, formatSpread, loopDelayDuring, measureLatency, median, ratioSpread, spread, table, type Spread } from './measure.js';
import { benchRepository } from './noop-backend.js';

const MODELS = fileURLToPath(new URL('../packages/backend-onnx/models/', import.meta.url));
const ROUNDS = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice('--rounds='.length) ?? process.env.ROUNDS ?? 5);
const SECTIONS = new Set((process.env.SECTIONS ?? '1,2,3,4,5,6,7').split(',').map(Number));
const FOOTPRINT_MODELS = Number(process.env.FOOTPRINT_MODELS ?? 200);
const CALLERS = 64;
const width = { tiny: 1, mlp: 256 } as const;
type ModelFile = keyof typeof width;

/** A config as an application writes it: no instance_group, no execution_thread, so the backend's defaults apply. */
const configOf = (file: ModelFile, extra = '', maxBatchSize = 64) => `platform: "onnxruntime_onnx"
max_batch_size: ${maxBatchSize}
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ ${width[file]} ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ ${width[file]} ] }
${extra}`;
const identityConfig = `platform: "onnxruntime_onnx"
max_batch_size: 0
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1, -1 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1, -1 ] }
`;

/** A temp repository: model name → [model file, config]. */
async function repositoryOf(prefix: string, entries: Record<string, [file: string, config: string]>): Promise<string> {
  const repository = await benchRepository(prefix, Object.fromEntries(Object.entries(entries).map(([name, [, config]]) => [name, config])));
  for (const [name, [file]] of Object.entries(entries)) await cp(join(MODELS, `${file}.onnx`), join(repository, name, '1', 'model.onnx'));
  return repository;
}

const rowsOf = (file: ModelFile, batch: number) => Float32Array.from({ length: batch * width[file] }, (_, i) => (i % 7) / 7);
const openRaw = (file: string) => ort.InferenceSession.create(join(MODELS, `${file}.onnx`));
/** Raw onnxruntime-node as an application calls it: a new ort.Tensor per call. */
const rawOnce = (session: ort.InferenceSession, file: ModelFile, batch: number) => {
  const data = rowsOf(file, batch);
  return () => session.run({ INPUT0: new ort.Tensor('float32', data, [batch, width[file]]) });
};
/** The same call after a turn of the event loop: what a careful application does between runs that hold the loop. */
const turnFirst = (once: () => Promise<unknown>) => async () => {
  await new Promise((resolve) => setImmediate(resolve));
  return once();
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const threadCount = () => readdirSync('/proc/self/task').length;
const rssMb = () => process.memoryUsage().rss / 2 ** 20;

// ---- the issue's targets, judged on the medians of per-round ratios --------------------------

type Target = { what: string; goal: string; figure?: string; met?: boolean; moonshot?: boolean };
const targets: Target[] = [];
/** Records a target; `value` undefined (section failed or skipped) reads NOT MEASURED. */
function judge(what: string, goal: string, value: Spread | number | undefined, pass: (v: number) => boolean, options: { moonshot?: boolean; shown?: string } = {}) {
  const v = typeof value === 'number' ? value : value?.median;
  const figure = options.shown ?? (value === undefined ? undefined : typeof value === 'number' ? value.toFixed(2) : formatSpread(value));
  targets.push({ what, goal, figure, met: v === undefined || Number.isNaN(v) ? undefined : pass(v), moonshot: options.moonshot });
}
/** Figures sections leave for the target lines. */
const figures: Record<string, Spread | number> = {};

// ---- the server: explicit model control, each section loads what it needs -----------------

let server: InferenceServer;
let repository: string;

async function withModels<T>(names: string[], body: () => Promise<T>): Promise<T> {
  for (const name of names) await server.loadModel(name);
  try {
    return await body();
  } finally {
    for (const name of names) await server.unloadModel(name).catch(() => {});
  }
}
const inferOnce = (model: string, file: ModelFile, batch: number) => {
  const data = rowsOf(file, batch);
  return () => server.infer(model, { inputs: { INPUT0: { datatype: 'FP32', shape: [batch, width[file]], data } } });
};
type Latency = Awaited<ReturnType<typeof measureLatency>>;
/** One figure's median over rounds. */
const med = (rounds: Latency[], key: keyof Latency) => median(rounds.map((x) => x[key]));
/** One figure's per-round ratio a/b: median and range. */
const ratio = (a: Latency[], b: Latency[], key: keyof Latency) => ratioSpread(a.map((x) => x[key]), b.map((x) => x[key]));
/** Raw session.run against server.infer() on the same file and batch, in alternating rounds. */
async function rawAgainstTritium(file: ModelFile, model: string, batch: number, calls: number, callers: number) {
  const session = await openRaw(file);
  try {
    const raw = rawOnce(session, file, batch);
    const tritium = inferOnce(model, file, batch);
    return await alternateRounds({ raw: () => measureLatency(raw, calls, callers), tritium: () => measureLatency(tritium, calls, callers) }, ROUNDS);
  } finally {
    await session.release();
  }
}
const meanBatch = (model: string) => {
  const stats = server.statistics(model).model_stats[0]!;
  return stats.inference_count / stats.execution_count;
};

// 1. One caller.
async function oneCaller() {
  const rows = [];
  for (const [file, calls] of [['tiny', 3_000], ['mlp', 2_000]] as const) {
    const r = await rawAgainstTritium(file, file, 1, calls, 1);
    const rate = ratio(r.tritium, r.raw, 'requestsPerSecond');
    const cpu = ratio(r.tritium, r.raw, 'cpuUsPerRequest');
    figures[`1caller.${file}.rate`] = rate;
    figures[`1caller.${file}.cpu`] = cpu;
    rows.push({
      model: file,
      'raw req/s': med(r.raw, 'requestsPerSecond'),
      'Tritium req/s': med(r.tritium, 'requestsPerSecond'),
      'req/s ratio': formatSpread(rate),
      'raw p50 µs': med(r.raw, 'p50'),
      'Tritium p50 µs': med(r.tritium, 'p50'),
      'raw CPU µs/req': med(r.raw, 'cpuUsPerRequest'),
      'Tritium CPU µs/req': med(r.tritium, 'cpuUsPerRequest'),
      'CPU ratio': formatSpread(cpu),
    });
  }
  const reasons = (await server.repositoryIndex()).filter((e) => e.name === 'tiny' || e.name === 'mlp').map((e) => `${e.name}: ${e.reason || '(no reason given)'}`);
  console.log(`\n1. default config, 1 caller at batch 1 (${ROUNDS} alternating rounds; ratio Tritium/raw: median (min–max))`);
  table(rows);
  console.log(`   model state: ${reasons.join(' | ')}`);
}

// 2. 64 callers, default scheduler, against a naive Promise.all on raw.
async function manyCallers() {
  const rows = [];
  for (const [file, calls] of [['tiny', 8_000], ['mlp', 8_000]] as const) {
    const r = await rawAgainstTritium(file, file, 1, calls, CALLERS);
    const rate = ratio(r.tritium, r.raw, 'requestsPerSecond');
    figures[`64callers.${file}.rate`] = rate;
    rows.push({
      model: file,
      'naive raw req/s': med(r.raw, 'requestsPerSecond'),
      'Tritium req/s': med(r.tritium, 'requestsPerSecond'),
      'req/s ratio': formatSpread(rate),
      'raw p99 µs': med(r.raw, 'p99'),
      'Tritium p99 µs': med(r.tritium, 'p99'),
      'raw CPU µs/req': med(r.raw, 'cpuUsPerRequest'),
      'Tritium CPU µs/req': med(r.tritium, 'cpuUsPerRequest'),
    });
  }
  console.log(`\n2. default config, ${CALLERS} callers at batch 1, against ${CALLERS} callers of raw session.run (${ROUNDS} alternating rounds)`);
  table(rows);
}

// 3. dynamic_batching {}: 64 callers of batch 1 against a hand-written batch-64 loop on raw.
async function dynamicBatching() {
  const rows = [];
  for (const [file, batches, calls] of [['tiny', 2_000, 8_192], ['mlp', 128, 8_192]] as const) {
    const session = await openRaw(file);
    try {
      const w = width[file];
      const callerRows = Array.from({ length: CALLERS }, () => rowsOf(file, 1));
      const split: Float32Array[] = new Array(CALLERS);
      // One iteration serves 64 requests: gather their rows, run once, hand each its slice.
      const handBatch = async () => {
        const batch = new Float32Array(CALLERS * w);
        for (let i = 0; i < CALLERS; i++) batch.set(callerRows[i]!, i * w);
        const out = await session.run({ INPUT0: new ort.Tensor('float32', batch, [CALLERS, w]) });
        const data = out.OUTPUT0!.data as Float32Array;
        for (let i = 0; i < CALLERS; i++) split[i] = data.slice(i * w, (i + 1) * w);
      };
      const batcher = promiseBatcher(session, file);
      const raw = rawOnce(session, file, 1);
      const model = `${file}_dynamic`;
      const tritium = inferOnce(model, file, 1);
      const r = await alternateRounds(
        {
          hand: async () => {
            const m = await measureLatency(handBatch, batches, 1);
            return { ...m, requestsPerSecond: m.requestsPerSecond * CALLERS, cpuUsPerRequest: m.cpuUsPerRequest / CALLERS };
          },
          naive: () => measureLatency(raw, calls, CALLERS),
          batcher: () => measureLatency(batcher, calls, CALLERS),
          tritium: () => measureLatency(tritium, calls, CALLERS),
        },
        ROUNDS,
      );
      const rate = ratioSpread(r.tritium.map((x) => x.requestsPerSecond), r.hand.map((x) => x.requestsPerSecond));
      const p99 = ratioSpread(r.tritium.map((x) => x.p99), r.naive.map((x) => x.p99));
      figures[`dynamic.${file}.rate`] = rate;
      figures[`dynamic.${file}.p99`] = p99;
      rows.push({
        model: file,
        'hand batch-64 raw req/s': median(r.hand.map((x) => x.requestsPerSecond)),
        'naive raw req/s': median(r.naive.map((x) => x.requestsPerSecond)),
        'Tritium req/s': median(r.tritium.map((x) => x.requestsPerSecond)),
        'Tritium/hand': formatSpread(rate),
        'Tritium/naive': formatSpread(ratioSpread(r.tritium.map((x) => x.requestsPerSecond), r.naive.map((x) => x.requestsPerSecond))),
        'promise batcher req/s': median(r.batcher.map((x) => x.requestsPerSecond)),
        'Tritium/promise batcher': formatSpread(ratioSpread(r.tritium.map((x) => x.requestsPerSecond), r.batcher.map((x) => x.requestsPerSecond))),
        'naive p99 µs': median(r.naive.map((x) => x.p99)),
        'Tritium p99 µs': median(r.tritium.map((x) => x.p99)),
        'p99 Tritium/naive': formatSpread(p99),
        'hand CPU µs/req': median(r.hand.map((x) => x.cpuUsPerRequest)),
        'Tritium CPU µs/req': median(r.tritium.map((x) => x.cpuUsPerRequest)),
        'mean batch': meanBatch(model),
      });
    } finally {
      await session.release();
    }
  }
  console.log(`\n3. dynamic_batching { } (max_batch_size 64), ${CALLERS} callers of batch 1, against a hand-written batch-64 loop on raw and the naive ${CALLERS}-caller raw run (${ROUNDS} alternating rounds)`);
  table(rows);
}

/**
 * What an application would write to batch its callers' requests by hand: each caller
 * awaits a promise; a flush queued as a microtask gathers up to 64 queued rows, runs
 * them once and resolves each caller with its slice. The hand-written batch-64 loop is
 * the ceiling (no callers, promises or queue); this is the per-request machinery's floor.
 */
function promiseBatcher(session: ort.InferenceSession, file: ModelFile): () => Promise<Float32Array> {
  const w = width[file];
  const row = rowsOf(file, 1);
  const queued: Array<(output: Float32Array) => void> = [];
  let flushing = false;
  const flush = async () => {
    while (queued.length > 0) {
      const callers = queued.splice(0, CALLERS);
      const batch = new Float32Array(callers.length * w);
      for (let i = 0; i < callers.length; i++) batch.set(row, i * w);
      const out = (await session.run({ INPUT0: new ort.Tensor('float32', batch, [callers.length, w]) })).OUTPUT0!.data as Float32Array;
      callers.forEach((resolve, i) => resolve(out.slice(i * w, (i + 1) * w)));
    }
    flushing = false;
  };
  return () =>
    new Promise((resolve) => {
      queued.push(resolve);
      if (!flushing) {
        flushing = true;
        queueMicrotask(() => void flush());
      }
    });
}

// 4. One batch-64 MLP request at a time.
async function oneBigBatch() {
  const r = await rawAgainstTritium('mlp', 'mlp', 64, 100, 1);
  const time = ratio(r.raw, r.tritium, 'requestsPerSecond');
  figures['batch64.time'] = time;
  console.log(`\n4. the MLP, one batch-64 request at a time (100 per round, ${ROUNDS} alternating rounds)`);
  table([
    {
      'raw µs/request': 1e6 / med(r.raw, 'requestsPerSecond'),
      'Tritium µs/request': 1e6 / med(r.tritium, 'requestsPerSecond'),
      'time ratio Tritium/raw': formatSpread(time),
      'raw p50 µs': med(r.raw, 'p50'),
      'Tritium p50 µs': med(r.tritium, 'p50'),
      'raw CPU µs/req': med(r.raw, 'cpuUsPerRequest'),
      'Tritium CPU µs/req': med(r.tritium, 'cpuUsPerRequest'),
    },
  ]);
}

// 5. Many models: each side in a fresh child process.
type Footprint = {
  side: string;
  models: number;
  loadMs: number;
  rss: { before: number; half: number; loaded: number; served: number; unloaded: number };
  threads: { before: number; half: number; loaded: number; served: number; unloaded: number };
};
function footprintInChild(side: 'raw' | 'tritium'): Promise<Footprint> {
  return new Promise((resolve, reject) => {
    const child = fork(fileURLToPath(import.meta.url), ['footprint', side, String(FOOTPRINT_MODELS)], { execArgv: ['--import', 'tsx'] });
    let result: Footprint | undefined;
    child.on('message', (message) => (result = message as Footprint));
    child.once('error', reject);
    child.once('exit', (code, signal) => (result ? resolve(result) : reject(new Error(`footprint child (${side}) exited with ${code ?? signal} before reporting`))));
  });
}
async function manyModels() {
  const sides: Footprint[] = [];
  for (const side of ['raw', 'tritium'] as const) sides.push(await footprintInChild(side));
  const n = FOOTPRINT_MODELS;
  console.log(`\n5. ${n} tiny models loaded one after another, each side in a fresh process (after one warm-up model or session, which the "before" figures include)`);
  table(
    sides.map((f) => ({
      side: f.side === 'raw' ? `raw: ${n} sessions` : `Tritium: ${n} models, default configs`,
      'load ms/model': f.loadMs / n,
      'RSS before MB': f.rss.before,
      'RSS loaded MB': f.rss.loaded,
      'MB/model': (f.rss.loaded - f.rss.before) / n,
      'MB/model after 1 request each': (f.rss.served - f.rss.before) / n,
      'RSS unloaded MB': f.rss.unloaded,
      threads: `${f.threads.before} → ${f.threads.half} (${n / 2}) → ${f.threads.loaded} (${n}) → ${f.threads.served} (served) → ${f.threads.unloaded} (unloaded)`,
    })),
  );
  const tritium = sides.find((f) => f.side === 'tritium')!;
  figures['models.mbPerModel'] = (tritium.rss.loaded - tritium.rss.before) / n;
  figures['models.msPerModel'] = tritium.loadMs / n;
  figures['models.threadsSecondHalf'] = tritium.threads.loaded - tritium.threads.half;
}

async function footprintChild(side: string, n: number): Promise<void> {
  const sample = () => ({ rss: rssMb(), threads: threadCount() });
  const marks: Record<string, { rss: number; threads: number }> = {};
  let loadMs = 0;
  const one = rowsOf('tiny', 1);
  if (side === 'raw') {
    const path = join(MODELS, 'tiny.onnx');
    const run = (s: ort.InferenceSession) => s.run({ INPUT0: new ort.Tensor('float32', one, [1, 1]) });
    const warm = await ort.InferenceSession.create(path);
    await run(warm);
    await sleep(300);
    marks.before = sample();
    const sessions: ort.InferenceSession[] = [];
    const start = performance.now();
    for (let i = 0; i < n; i++) {
      sessions.push(await ort.InferenceSession.create(path));
      if (i + 1 === n / 2) marks.half = sample();
    }
    loadMs = performance.now() - start;
    await sleep(300);
    marks.loaded = sample();
    for (const s of sessions) await run(s);
    await sleep(300);
    marks.served = sample();
    for (const s of sessions) await s.release();
    await sleep(500);
    marks.unloaded = sample();
    await warm.release();
  } else {
    const names = Array.from({ length: n }, (_, i) => `tiny_${i}`);
    const root = await repositoryOf('tritium-bench-footprint-', Object.fromEntries(['warm', ...names].map((name) => [name, ['tiny', configOf('tiny')]])));
    const footprintServer = await InferenceServer.start({ modelRepository: root, modelControlMode: 'explicit', backends: [onnxBackend()] });
    try {
      const infer = (model: string) => footprintServer.infer(model, { inputs: { INPUT0: { datatype: 'FP32', shape: [1, 1], data: one } } });
      await footprintServer.loadModel('warm');
      await infer('warm');
      await sleep(300);
      marks.before = sample();
      const start = performance.now();
      for (let i = 0; i < n; i++) {
        await footprintServer.loadModel(names[i]!);
        if (i + 1 === n / 2) marks.half = sample();
      }
      loadMs = performance.now() - start;
      await sleep(300);
      marks.loaded = sample();
      for (const name of names) await infer(name);
      await sleep(300);
      marks.served = sample();
      for (const name of names) await footprintServer.unloadModel(name);
      await sleep(500);
      marks.unloaded = sample();
    } finally {
      await footprintServer.stop();
      await rm(root, { recursive: true, force: true });
    }
  }
  marks.half ??= marks.loaded!;
  const pick = (key: 'rss' | 'threads') =>
    Object.fromEntries(Object.entries(marks).map(([mark, s]) => [mark, s[key]])) as Footprint['rss'];
  process.send!({ side, models: n, loadMs, rss: pick('rss'), threads: pick('threads') } satisfies Footprint);
}

// 6. A 64 MB identity, one request.
async function largeTensor() {
  const elements = (64 * 2 ** 20) / 4;
  const data = Float32Array.from({ length: elements }, (_, i) => i % 251);
  const session = await openRaw('identity_fp32');
  try {
    const raw = () => session.run({ INPUT0: new ort.Tensor('float32', data, [1, elements]) });
    const tritium = () => server.infer('identity', { inputs: { INPUT0: { datatype: 'FP32', shape: [1, elements], data } } });
    const rounds = Math.min(ROUNDS, 3);
    const r = await alternateRounds({ raw: () => measureLatency(raw, 1, 1), tritium: () => measureLatency(tritium, 1, 1) }, rounds);
    const time = ratioSpread(r.tritium.map((x) => x.p50), r.raw.map((x) => x.p50));
    figures['identity64.time'] = time;
    console.log(`\n6. 64 MB FP32 identity, one request at a time (${rounds} alternating rounds)`);
    table([
      {
        'raw ms': median(r.raw.map((x) => x.p50)) / 1000,
        'Tritium ms': median(r.tritium.map((x) => x.p50)) / 1000,
        'time ratio Tritium/raw': formatSpread(time),
        'raw CPU ms': median(r.raw.map((x) => x.cpuUsPerRequest)) / 1000,
        'Tritium CPU ms': median(r.tritium.map((x) => x.cpuUsPerRequest)) / 1000,
      },
    ]);
  } finally {
    await session.release();
  }
}

// 7. Event-loop delay under load, and an abort during a ~6 ms run.
async function loopAndAborts() {
  const session = await openRaw('mlp');
  try {
    const requests = 600;
    const underLoad = (load: () => Promise<unknown>) => async () => {
      const { p99, max, seconds, markCompacts } = await loopDelayDuring(load);
      return { p99, max, rate: requests / seconds, markCompacts };
    };
    const rounds = Math.min(ROUNDS, 3);
    const r = await alternateRounds(
      {
        idle: underLoad(() => sleep(600)),
        raw: underLoad(() => measureLatency(rawOnce(session, 'mlp', 64), requests, 8)),
        rawTurning: underLoad(() => measureLatency(turnFirst(rawOnce(session, 'mlp', 64)), requests, 1)),
        tritium: underLoad(() => measureLatency(inferOnce('mlp', 'mlp', 64), requests, 8)),
      },
      rounds,
    );
    figures['loop.p99'] = spread(r.tritium.map((x) => x.p99));
    console.log(`\n7a. event-loop delay (monitorEventLoopDelay, 1 ms resolution, so ~1 ms is the floor) under sustained MLP load: batch 64, 8 callers, ${requests} requests (${rounds} alternating rounds)`);
    table(
      (['idle', 'raw', 'rawTurning', 'tritium'] as const).map((side) => ({
        run: { idle: 'idle loop (no requests)', raw: 'raw session.run', rawTurning: 'raw, 1 caller, a loop turn before each run', tritium: 'Tritium, default config' }[side],
        'p99 ms': formatSpread(spread(r[side].map((x) => x.p99))),
        'max ms': median(r[side].map((x) => x.max)),
        'req/s': side === 'idle' ? '' : median(r[side].map((x) => x.rate)),
        'mark-compacts per round': r[side].map((x) => x.markCompacts).join(', '),
      })),
    );
  } finally {
    await session.release();
  }

  // A batch sized so that one run through the server takes about 6 ms.
  const timeAt = async (batch: number, runs: number) => {
    const once = inferOnce('mlp_large', 'mlp', batch);
    for (let i = 0; i < 3; i++) await once();
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const start = performance.now();
      await once();
      times.push(performance.now() - start);
    }
    return median(times);
  };
  const batch = Math.max(16, Math.min(1024, Math.round((64 * 6) / (await timeAt(64, 10)))));
  const runMs = await timeAt(batch, 7);
  const cancelAfterMs = 2;
  const data = rowsOf('mlp', batch);
  const latencies: number[] = [];
  const lateness: number[] = [];
  const outcomes: Record<string, number> = {};
  for (let trial = 0; trial < 12; trial++) {
    const due = performance.now() + cancelAfterMs;
    const running = server.startInference('mlp_large', { inputs: { INPUT0: { datatype: 'FP32', shape: [batch, 256], data } } });
    let cancelledAt = Number.POSITIVE_INFINITY;
    const timer = setTimeout(() => {
      cancelledAt = performance.now();
      running.cancel();
    }, cancelAfterMs);
    const outcome = await running.response.then(
      () => 'completed before the cancel',
      (error) => (error instanceof InferenceError && error.code === 'CANCELLED' ? 'CANCELLED' : `failed: ${String(error)}`),
    );
    const settled = performance.now();
    clearTimeout(timer);
    // From when the cancel was due, or issued if Node's timer fired early: a timer held up
    // by a blocked event loop counts against the answer.
    latencies.push(settled - Math.min(due, cancelledAt));
    if (Number.isFinite(cancelledAt)) lateness.push(cancelledAt - due);
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    await sleep(runMs * 2); // let the abandoned run finish before the next trial
  }
  figures['abort.ms'] = spread(latencies);
  console.log(`\n7b. cancel() ${cancelAfterMs} ms into a run of the MLP at batch ${batch} (${runMs.toFixed(1)} ms through the server; mlp_large: max_batch_size 1024, default config), 12 trials`);
  table([
    {
      'run ms': runMs,
      'answered ms after the cancel was due': formatSpread(spread(latencies)),
      'cancel timer late by ms': lateness.length ? formatSpread(spread(lateness)) : '',
      outcomes: Object.entries(outcomes).map(([k, v]) => `${k} ×${v}`).join(', '),
    },
  ]);
}

function printTargets() {
  const f = (key: string) => figures[key];
  const n = FOOTPRINT_MODELS;
  judge('1 caller, tiny: req/s', '≥ 0.75× raw', f('1caller.tiny.rate'), (v) => v >= 0.75);
  judge('1 caller, MLP: req/s', '≥ 0.85× raw', f('1caller.mlp.rate'), (v) => v >= 0.85);
  judge('1 caller, tiny: CPU per request', '≤ 1.3× raw', f('1caller.tiny.cpu'), (v) => v <= 1.3);
  judge('1 caller, MLP: CPU per request', '≤ 1.3× raw', f('1caller.mlp.cpu'), (v) => v <= 1.3);
  judge('MLP, one batch-64 request at a time: time', '≤ 1.1× raw', f('batch64.time'), (v) => v <= 1.1);
  judge('64 callers, tiny: req/s', '≥ 1.0× naive Promise.all on raw', f('64callers.tiny.rate'), (v) => v >= 1);
  judge('64 callers, MLP: req/s', '≥ 1.0× naive Promise.all on raw', f('64callers.mlp.rate'), (v) => v >= 1);
  judge('dynamic_batching, 64 callers, MLP: req/s', '≥ 0.8× hand-written batch-64 loop', f('dynamic.mlp.rate'), (v) => v >= 0.8);
  judge('dynamic_batching, 64 callers, tiny: req/s', '≥ 0.5× hand-written batch-64 loop', f('dynamic.tiny.rate'), (v) => v >= 0.5);
  judge('dynamic_batching, 64 callers, MLP: p99', '≤ 1.0× the naive raw run\'s p99', f('dynamic.mlp.p99'), (v) => v <= 1);
  judge('dynamic_batching, 64 callers, tiny: p99', '≤ 1.0× the naive raw run\'s p99', f('dynamic.tiny.p99'), (v) => v <= 1);
  const shown = (key: string, format: (v: Spread | number) => string) => {
    const value = f(key);
    return value === undefined ? undefined : format(value);
  };
  const number = (digits: number, unit: string) => (v: Spread | number) => `${(v as number).toFixed(digits)}${unit}`;
  judge(`${n} tiny models: RSS per model`, '≤ 2 MB', f('models.mbPerModel'), (v) => v <= 2, { shown: shown('models.mbPerModel', number(2, ' MB')) });
  judge(`${n} tiny models: load time per model`, '≤ 10 ms', f('models.msPerModel'), (v) => v <= 10, { shown: shown('models.msPerModel', number(1, ' ms')) });
  judge(`${n} tiny models: thread count independent of model count`, `≤ 2 threads added by the second ${n / 2}`, f('models.threadsSecondHalf'), (v) => v <= 2, { shown: shown('models.threadsSecondHalf', (v) => `+${v} threads`) });
  judge('64 MB identity: time', '≤ 1.5× raw session.run', f('identity64.time'), (v) => v <= 1.5);
  judge('event-loop delay p99 under sustained MLP load', '≤ 2 ms', f('loop.p99'), (v) => v <= 2, { shown: shown('loop.p99', (v) => `${formatSpread(v as Spread)} ms`) });
  judge('abort answered during a ~6 ms run (median)', '≤ 3 ms (half of a 6 ms run)', f('abort.ms'), (v) => v <= 3, { shown: shown('abort.ms', (v) => `${formatSpread(v as Spread)} ms`) });
  judge('moonshot: 1 caller, tiny: req/s', '≥ 1.0× raw', f('1caller.tiny.rate'), (v) => v >= 1, { moonshot: true });
  judge('moonshot: 1 caller, MLP: req/s', '≥ 1.0× raw', f('1caller.mlp.rate'), (v) => v >= 1, { moonshot: true });
  judge('moonshot: dynamic_batching, MLP: req/s', '≥ 1.0× hand-written batch-64 loop', f('dynamic.mlp.rate'), (v) => v >= 1, { moonshot: true });
  judge('moonshot: dynamic_batching, tiny: req/s', '≥ 1.0× hand-written batch-64 loop', f('dynamic.tiny.rate'), (v) => v >= 1, { moonshot: true });
  console.log('\nTargets (issue 19), on the medians (ratios: median (min–max) of per-round ratios):');
  for (const t of targets) {
    const verdict = t.met === undefined ? 'NOT MEASURED' : t.met ? 'MET' : 'MISSED';
    console.log(`  ${verdict.padEnd(12)} ${t.what}: ${t.goal}${t.figure ? ` — ${t.figure}` : ''}`);
  }
}

async function main() {
  const began = performance.now();
  const git = (...args: string[]) => {
    try {
      return execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trimEnd();
    } catch {
      return '?';
    }
  };
  const dirty = git('status', '--short', 'packages/backend-onnx');
  console.log(`bench:inprocess — ${new Date().toISOString()}, node ${process.version}, onnxruntime-node ${ort.env.versions.node ?? '?'}, ${availableParallelism()} cores`);
  console.log(`commit ${git('rev-parse', '--short', 'HEAD')}; packages/backend-onnx ${dirty ? `has uncommitted changes:\n${dirty}` : 'clean'}`);
  // Which sources ran: a tsconfig given through TSX_TSCONFIG_PATH may map the package elsewhere.
  console.log(`@tritium/backend-onnx from ${fileURLToPath(import.meta.resolve('@tritium/backend-onnx'))}`);
  console.log(`load average at start: ${loadavg().map((l) => l.toFixed(2)).join(' ')}; ROUNDS=${ROUNDS}, SECTIONS=${[...SECTIONS].join(',')}`);

  repository = await repositoryOf('tritium-bench-inprocess-', {
    tiny: ['tiny', configOf('tiny')],
    mlp: ['mlp', configOf('mlp')],
    tiny_dynamic: ['tiny', configOf('tiny', 'dynamic_batching { }')],
    mlp_dynamic: ['mlp', configOf('mlp', 'dynamic_batching { }')],
    mlp_large: ['mlp', configOf('mlp', '', 1024)],
    identity: ['identity_fp32', identityConfig],
  });
  server = await InferenceServer.start({ modelRepository: repository, modelControlMode: 'explicit', backends: [onnxBackend()] });
  const sections: Array<[number, string, () => Promise<unknown>]> = [
    [1, '1 caller', () => withModels(['tiny', 'mlp'], oneCaller)],
    [2, '64 callers', () => withModels(['tiny', 'mlp'], manyCallers)],
    [3, 'dynamic batching', () => withModels(['tiny_dynamic', 'mlp_dynamic'], dynamicBatching)],
    [4, 'one batch-64 request', () => withModels(['mlp'], oneBigBatch)],
    [6, '64 MB identity', () => withModels(['identity'], largeTensor)],
    [7, 'event loop and aborts', () => withModels(['mlp', 'mlp_large'], loopAndAborts)],
    // Last: its 200 raw sessions' threads leave the load average high for a while (28 on the 2-core machine), which timed sections after it would feel.
    [5, 'many models', manyModels],
  ];
  try {
    for (const [number, name, run] of sections) {
      if (!SECTIONS.has(number)) continue;
      const start = performance.now();
      try {
        await run();
        console.log(`   (section ${number} took ${((performance.now() - start) / 1000).toFixed(0)} s; load average ${loadavg()[0]!.toFixed(2)})`);
      } catch (error) {
        console.log(`\n${number}. ${name}: FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      }
    }
  } finally {
    await server.stop();
    await rm(repository, { recursive: true, force: true });
  }
  printTargets();
  console.log(`\nload average at end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}; total ${((performance.now() - began) / 1000).toFixed(0)} s`);
}

if (process.argv[2] === 'footprint') await footprintChild(process.argv[3]!, Number(process.argv[4]));
else await main();
