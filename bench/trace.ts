/**
 * What tracing (docs/trace.md) costs `server.infer()` on a no-op backend: trace level OFF,
 * TIMESTAMPS at trace_rate 1000 (Triton's default rate) and at trace_rate 1 (every
 * request traced), in Triton's mode (trace files) and in OpenTelemetry mode (spans
 * exported over OTLP/HTTP to a sink in a child process), in alternating rounds. The
 * OpenTelemetry server with tracing OFF against the other one is the A/A spread.
 * Then the same for a real model (the tiny ONNX model, inline), where a request's
 * stages are many: rate 1000 against two servers with tracing OFF, by wall time and by
 * the process's CPU time per request.
 * Run: npx -y pnpm@10.34.9 bench:trace
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onnxBackend } from '@tritium/backend-onnx';
import { InferenceServer, type TraceSettingChanges } from '@tritium/core';
import { alternateRounds, formatSpread, measureLatency, measureRate, median, ratioSpread, table } from './measure.js';
import { benchRepository, noopServing } from './noop-backend.js';
import { copyOnnxModel, onnxConfig } from './tiny-onnx.js';

const CALLS_PER_ROUND = 10_000;
const ROUNDS = 15;

/** An OTLP/HTTP receiver that takes every export and answers 200, in a process of its own so that it costs the bench nothing. */
const SINK = `require('node:http').createServer((req, res) => { req.resume(); req.on('end', () => res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end()); })
  .listen(0, '127.0.0.1', function () { console.log(this.address().port); });`;
const sink = spawn(process.execPath, ['-e', SINK], { stdio: ['ignore', 'pipe', 'inherit'] });
const [port] = (await once(sink.stdout!, 'data')) as [Buffer];

const triton = await noopServing();
const openTelemetry = await noopServing({ trace: { trace_mode: 'opentelemetry', opentelemetry: { url: `http://127.0.0.1:${String(port).trim()}/v1/traces` } } });
const directory = await mkdtemp(join(tmpdir(), 'tritium-bench-trace-'));
// Every 1000 traces to trace.json.<index>, so that rate 1 does not pile traces up in memory.
const traced: TraceSettingChanges = { trace_file: join(directory, 'trace.json'), log_frequency: 1000 };
const at = (serving: typeof triton, level: 'OFF' | 'TIMESTAMPS', rate: number) => async (callers: number) => {
  serving.server.updateTraceSettings({ ...(serving === triton ? traced : {}), trace_level: [level], trace_rate: rate });
  try {
    return (await measureRate(serving.callServer, CALLS_PER_ROUND, callers)).usPerRequest;
  } finally {
    serving.server.updateTraceSettings({ trace_level: ['OFF'] });
  }
};

const rows = [];
for (const callers of [1, 64]) {
  const rounds = await alternateRounds(
    {
      off: () => at(triton, 'OFF', 1000)(callers),
      rate1000: () => at(triton, 'TIMESTAMPS', 1000)(callers),
      rate1: () => at(triton, 'TIMESTAMPS', 1)(callers),
      otelOff: () => at(openTelemetry, 'OFF', 1000)(callers),
      otel1000: () => at(openTelemetry, 'TIMESTAMPS', 1000)(callers),
      otel1: () => at(openTelemetry, 'TIMESTAMPS', 1)(callers),
    },
    ROUNDS,
  );
  rows.push({
    callers,
    'OFF µs/req': median(rounds.off),
    'rate 1000 µs/req': median(rounds.rate1000),
    'rate 1 µs/req': median(rounds.rate1),
    'OTel rate 1000 µs/req': median(rounds.otel1000),
    'OTel rate 1 µs/req': median(rounds.otel1),
    // A/A: two servers, both with tracing off.
    'OTel OFF / OFF': formatSpread(ratioSpread(rounds.otelOff, rounds.off)),
    'rate 1000 / OFF': formatSpread(ratioSpread(rounds.rate1000, rounds.off)),
    'rate 1 / OFF': formatSpread(ratioSpread(rounds.rate1, rounds.off)),
    'OTel rate 1000 / OFF': formatSpread(ratioSpread(rounds.otel1000, rounds.off)),
    'OTel rate 1 / OFF': formatSpread(ratioSpread(rounds.otel1, rounds.off)),
  });
}
console.log(`server.infer() on a no-op backend with tracing OFF, at trace_rate 1000 and at trace_rate 1 in Triton's mode and in OpenTelemetry mode (OTel), ${CALLS_PER_ROUND} calls per round, medians (ratios: median (min–max)) of ${ROUNDS} alternating rounds`);
table(rows);

await triton.close();
await openTelemetry.close();
sink.kill();

const MODEL_CALLS_PER_ROUND = 20_000;
const repository = await benchRepository('tritium-bench-trace-model-', { tiny: onnxConfig('1', 'inline') });
await copyOnnxModel(repository, 'tiny', 'tiny.onnx');
const startTiny = () => InferenceServer.start({ modelRepository: repository, backends: [onnxBackend()] });
const first = await startTiny();
const second = await startTiny();
const tinyInput = { INPUT0: { datatype: 'FP32', shape: [1, 1], data: new Float32Array(1) } } as const;
/** µs per request, wall and CPU (every thread of the process), with `server` at `level`. */
const modelAt = (server: InferenceServer, level: 'OFF' | 'TIMESTAMPS', callers: number) => async () => {
  server.updateTraceSettings({ ...traced, trace_level: [level], trace_rate: 1000 });
  try {
    const { requestsPerSecond, cpuUsPerRequest } = await measureLatency(() => server.infer('tiny', { inputs: tinyInput }), MODEL_CALLS_PER_ROUND, callers);
    return { wall: 1e6 / requestsPerSecond, cpu: cpuUsPerRequest };
  } finally {
    server.updateTraceSettings({ trace_level: ['OFF'] });
  }
};
const modelRows = [];
for (const callers of [1, 64]) {
  const rounds = await alternateRounds({ off: modelAt(first, 'OFF', callers), offAgain: modelAt(second, 'OFF', callers), rate1000: modelAt(first, 'TIMESTAMPS', callers) }, ROUNDS);
  const wall = (side: keyof typeof rounds) => rounds[side].map((round) => round.wall);
  const cpu = (side: keyof typeof rounds) => rounds[side].map((round) => round.cpu);
  modelRows.push({
    callers,
    'OFF µs/req (CPU)': `${median(wall('off')).toFixed(2)} (${median(cpu('off')).toFixed(2)})`,
    'rate 1000 µs/req (CPU)': `${median(wall('rate1000')).toFixed(2)} (${median(cpu('rate1000')).toFixed(2)})`,
    'OFF / OFF (A/A) wall': formatSpread(ratioSpread(wall('offAgain'), wall('off'))),
    'rate 1000 / OFF wall': formatSpread(ratioSpread(wall('rate1000'), wall('off'))),
    'OFF / OFF (A/A) CPU': formatSpread(ratioSpread(cpu('offAgain'), cpu('off'))),
    'rate 1000 / OFF CPU': formatSpread(ratioSpread(cpu('rate1000'), cpu('off'))),
  });
}
console.log(`\nserver.infer() on the tiny ONNX model (inline), tracing OFF on two servers (the A/A) and TIMESTAMPS at trace_rate 1000, ${MODEL_CALLS_PER_ROUND} calls per round, medians (ratios: median (min–max)) of ${ROUNDS} alternating rounds`);
table(modelRows);
await Promise.all([first.stop(), second.stop()]);
await rm(repository, { recursive: true, force: true });
await rm(directory, { recursive: true, force: true });
