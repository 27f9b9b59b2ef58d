/**
 * What Triton-mode tracing (docs/trace.md) costs `server.infer()` on a no-op backend:
 * trace level OFF, TIMESTAMPS at trace_rate 1000 (Triton's default rate) and at
 * trace_rate 1 (every request traced), in alternating rounds.
 * Run: npx -y pnpm@10.34.9 bench:trace
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { alternateRounds, formatSpread, measureRate, median, ratioSpread, table } from './measure.js';
import { noopServing } from './noop-backend.js';

const CALLS_PER_ROUND = 10_000;
const ROUNDS = 15;
const { server, callServer, close } = await noopServing();
const directory = await mkdtemp(join(tmpdir(), 'tritium-bench-trace-'));
// Every 1000 traces to trace.json.<index>, so that rate 1 does not pile traces up in memory.
const traced = { trace_file: join(directory, 'trace.json'), log_frequency: 1000 };
const at = (level: 'OFF' | 'TIMESTAMPS', rate: number) => async (callers: number) => {
  server.updateTraceSettings({ ...traced, trace_level: [level], trace_rate: rate });
  try {
    return (await measureRate(callServer, CALLS_PER_ROUND, callers)).usPerRequest;
  } finally {
    server.updateTraceSettings({ trace_level: ['OFF'] });
  }
};

const rows = [];
for (const callers of [1, 64]) {
  const rounds = await alternateRounds({ off: () => at('OFF', 1000)(callers), rate1000: () => at('TIMESTAMPS', 1000)(callers), rate1: () => at('TIMESTAMPS', 1)(callers) }, ROUNDS);
  rows.push({
    callers,
    'OFF µs/req': median(rounds.off),
    'rate 1000 µs/req': median(rounds.rate1000),
    'rate 1 µs/req': median(rounds.rate1),
    'rate 1000 / OFF': formatSpread(ratioSpread(rounds.rate1000, rounds.off)),
    'rate 1 / OFF': formatSpread(ratioSpread(rounds.rate1, rounds.off)),
  });
}
console.log(`server.infer() on a no-op backend with tracing OFF, at trace_rate 1000 and at trace_rate 1, ${CALLS_PER_ROUND} calls per round, medians (ratios: median (min–max)) of ${ROUNDS} alternating rounds`);
table(rows);

await close();
await rm(directory, { recursive: true, force: true });
