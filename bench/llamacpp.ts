/**
 * The llamacpp backend (issue 23) on a tiny random Llama GGUF written at start
 * (packages/backend-llamacpp/models/make-tiny-gguf.py; needs python3 with gguf):
 * 1. continuous batching: tokens/s of 1, 4 and 8 concurrent streams against the same
 *    streams one after another, and against as many concurrent streams on node-llama-cpp
 *    called directly (same GGUF, a context made with the same settings);
 * 2. overhead against node-llama-cpp called directly: time to first token and per-token
 *    latency of one stream;
 * 3. the host event loop's delay while 8 streams generate, against the idle loop and
 *    against 8 streams on node-llama-cpp directly.
 * Every side runs once per round, rounds alternate; figures are medians with their range.
 * Run: npx -y pnpm@10.34.9 bench:llm   (ROUNDS=5 TOKENS=64 EMBEDDING=512 LAYERS=8 F16=1 THREADS=1)
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { InferenceServer } from '@tritium/core';
import { llamacppBackend } from '@tritium/backend-llamacpp';
import { getLlama, type LlamaContextSequence, type Token } from 'node-llama-cpp';
import { makeTinyLlamaModel, tinyGgufUnavailable } from '../packages/backend-llamacpp/models/tiny-llama.js';
import { alternateRounds, formatSpread, loopDelayDuring, median, ratioSpread, spread, table } from './measure.js';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const TOKENS = Number(process.env.TOKENS ?? 64);
const engine = { context_size: 512, parallel: 8, threads: Number(process.env.THREADS ?? 1), batch_size: 512 };
const shape = { embedding: Number(process.env.EMBEDDING ?? 512), layers: Number(process.env.LAYERS ?? 8), heads: 4, f16: process.env.F16 !== '0' };

const missing = await tinyGgufUnavailable();
if (missing) {
  console.log(`bench:llm needs ${missing}`);
  process.exit(0);
}
const directory = await mkdtemp(join(tmpdir(), 'tritium-bench-llm-'));
try {
  const modelDirectory = await makeTinyLlamaModel(directory, { name: 'llm', engine, ...shape });
  const server = await InferenceServer.start({ modelRepository: directory, backends: [llamacppBackend()] });
  const prompts = Array.from({ length: 8 }, (_, i) => `the story number ${i} of the day`);
  const sampling = JSON.stringify({ temperature: 0, max_tokens: TOKENS, ignore_eos: true });

  /** One stream through the server: the times (ms since the call) of its responses. */
  async function serverStream(prompt: string): Promise<number[]> {
    const start = performance.now();
    const times: number[] = [];
    const inputs = {
      text_input: { datatype: 'BYTES' as const, shape: [1], data: [prompt] },
      stream: { datatype: 'BOOL' as const, shape: [1], data: [true] },
      sampling_parameters: { datatype: 'BYTES' as const, shape: [1], data: [sampling] },
    };
    for await (const _ of server.inferStream('llm', { inputs, outputs: ['text_output'] })) times.push(performance.now() - start);
    return times;
  }

  // node-llama-cpp alone, on a context made as the backend makes its own.
  const llama = await getLlama({ gpu: false, build: 'never', skipDownload: true, maxThreads: 0 });
  const model = await llama.loadModel({ modelPath: join(modelDirectory, '1', 'model.gguf'), gpuLayers: 0 });
  const context = await model.createContext({ contextSize: engine.context_size, sequences: engine.parallel, batchSize: engine.batch_size, threads: engine.threads });
  const sequences: LlamaContextSequence[] = Array.from({ length: engine.parallel }, () => context.getSequence());
  async function directStream(prompt: string, sequence = sequences[0]!): Promise<number[]> {
    const start = performance.now();
    const tokens: Token[] = [model.tokens.bos!, ...model.tokenize(prompt, true)];
    const times: number[] = [];
    const options = { temperature: 0, topK: 0, topP: 1, minP: 0, yieldEogToken: true };
    for await (const token of sequence.evaluate(tokens, options)) {
      model.detokenize([token], false, tokens);
      times.push(performance.now() - start);
      if (times.length >= TOKENS) break;
    }
    await sequence.clearHistory();
    return times;
  }

  const firstAndPerToken = (times: number[]) => ({ first: times[0]!, perToken: (times.at(-1)! - times[0]!) / (times.length - 1) });
  /** Tokens per second of wall time, and the process's CPU time per token (every thread), which the machine's other load disturbs less. */
  const tokensPerSecond = async (run: () => Promise<unknown>, streams: number) => {
    const start = performance.now();
    const cpu = process.cpuUsage();
    await run();
    const { user, system } = process.cpuUsage(cpu);
    const tokens = streams * TOKENS;
    return { rate: tokens / ((performance.now() - start) / 1000), cpuMsPerToken: (user + system) / 1000 / tokens };
  };
  const concurrent = (n: number) => () => tokensPerSecond(() => Promise.all(prompts.slice(0, n).map(serverStream)), n);
  const directConcurrent = (n: number) => () => tokensPerSecond(() => Promise.all(prompts.slice(0, n).map((prompt, i) => directStream(prompt, sequences[i]))), n);
  const sequential = (n: number) => () =>
    tokensPerSecond(async () => {
      for (const prompt of prompts.slice(0, n)) await serverStream(prompt);
    }, n);

  console.log(`tiny Llama: ${shape.embedding} wide, ${shape.layers} layers, ${shape.f16 ? 'F16' : 'F32'}; ${TOKENS} tokens a stream; ${engine.threads} thread(s), ${engine.parallel} sequences; ${ROUNDS} alternating rounds`);

  // 1. Continuous batching.
  const batching = await alternateRounds(
    {
      seq1: sequential(1),
      conc1: concurrent(1),
      seq4: sequential(4),
      conc4: concurrent(4),
      seq8: sequential(8),
      conc8: concurrent(8),
      direct1: directConcurrent(1),
      direct4: directConcurrent(4),
      direct8: directConcurrent(8),
    },
    ROUNDS,
  );
  const rates = (side: keyof typeof batching) => batching[side].map((r) => r.rate);
  const cpu = (side: keyof typeof batching) => batching[side].map((r) => r.cpuMsPerToken);
  table(
    ([1, 4, 8] as const).map((n) => ({
      streams: n,
      'one after another tok/s': formatSpread(spread(rates(`seq${n}`)), 0),
      'concurrent tok/s': formatSpread(spread(rates(`conc${n}`)), 0),
      'concurrent ÷ one after another': formatSpread(ratioSpread(rates(`conc${n}`), rates(`seq${n}`))),
      'node-llama-cpp concurrent tok/s': formatSpread(spread(rates(`direct${n}`)), 0),
      'server ÷ node-llama-cpp, concurrent': formatSpread(ratioSpread(rates(`conc${n}`), rates(`direct${n}`))),
    })),
  );
  table(
    ([1, 4, 8] as const).map((n) => ({
      streams: n,
      'CPU ms/token, one after another': formatSpread(spread(cpu(`seq${n}`)), 3),
      'CPU ms/token, concurrent': formatSpread(spread(cpu(`conc${n}`)), 3),
      'one after another ÷ concurrent': formatSpread(ratioSpread(cpu(`seq${n}`), cpu(`conc${n}`))),
      'CPU ms/token, node-llama-cpp concurrent': formatSpread(spread(cpu(`direct${n}`)), 3),
    })),
  );

  // 2. Overhead against node-llama-cpp at one stream.
  const overhead = await alternateRounds({ direct: () => directStream(prompts[0]!), server: () => serverStream(prompts[0]!) }, ROUNDS * 3);
  const direct = overhead.direct.map(firstAndPerToken);
  const served = overhead.server.map(firstAndPerToken);
  table(
    (['first', 'perToken'] as const).map((key) => ({
      figure: key === 'first' ? 'time to first token ms' : 'per-token ms',
      'node-llama-cpp': formatSpread(spread(direct.map((d) => d[key])), 3),
      'server.inferStream': formatSpread(spread(served.map((s) => s[key])), 3),
      'server ÷ direct': formatSpread(ratioSpread(served.map((s) => s[key]), direct.map((d) => d[key])), 3),
    })),
  );

  // 3. Event-loop delay while 8 streams generate, against the loop idle and node-llama-cpp's own 8 streams.
  const loop = await alternateRounds(
    {
      idle: async () => loopDelayDuring(() => sleep(500)),
      direct: async () => loopDelayDuring(() => Promise.all(prompts.map((prompt, i) => directStream(prompt, sequences[i])))),
      server: async () => loopDelayDuring(() => Promise.all(prompts.map(serverStream))),
    },
    ROUNDS,
  );
  const loopLabels = { idle: 'idle (500 ms)', direct: '8 streams, node-llama-cpp directly', server: '8 streams, server.inferStream' };
  table(
    (['idle', 'direct', 'server'] as const).map((side) => ({
      loop: loopLabels[side],
      'p50 ms': median(loop[side].map((d) => d.p50)),
      'p99 ms': formatSpread(spread(loop[side].map((d) => d.p99))),
      'max ms': formatSpread(spread(loop[side].map((d) => d.max))),
    })),
  );

  await context.dispose();
  await llama.dispose();
  await server.stop();
} finally {
  await rm(directory, { recursive: true, force: true });
}
