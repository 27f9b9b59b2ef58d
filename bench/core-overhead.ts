/**
 * What `server.infer()` adds per request over calling a backend's execute directly,
 * on a no-op backend: sequential, and with 64 concurrent callers; then 64 callers
 * sustained for several seconds, window after window (a cost that grows with time, such
 * as the garbage collector's, shows there).
 * Run: npx -y pnpm@10.34.9 bench:core
 */
import { median, measureRate, table } from './measure.js';
import { noopServing } from './noop-backend.js';

const CALLS = 100_000;
const { callDirect, callServer, close } = await noopServing();

const rows = [];
for (const concurrency of [1, 64]) {
  const rate = (once: () => Promise<unknown>) => measureRate(once, CALLS / 10, concurrency);
  // Alternating rounds, so a drift in machine load hits both alike.
  const base: number[] = [];
  const served: number[] = [];
  await rate(callDirect);
  await rate(callServer);
  for (let round = 0; round < 15; round++) {
    base.push((await rate(callDirect)).usPerRequest);
    served.push((await rate(callServer)).usPerRequest);
  }
  const direct = median(base);
  const infer = median(served);
  rows.push({
    callers: concurrency,
    'direct µs/req': direct,
    'infer() µs/req': infer,
    'added µs/req': infer - direct,
    'direct req/s': 1e6 / direct,
    'infer() req/s': 1e6 / infer,
    'ratio infer/direct': infer / direct,
  });
}
console.log(`server.infer() vs backend execute() on a no-op backend, ${CALLS / 10} calls per round, medians of 15 alternating rounds`);
table(rows);

// Sustained load: short rounds end before the young generation's collections show what
// survives them. Consecutive windows of 64 callers, each ~1–2 s, one after another.
const WINDOW_CALLS = 500_000;
const windows: Array<Record<string, string | number>> = [];
for (let window = 1; window <= 5; window++) {
  const { usPerRequest } = await measureRate(callServer, WINDOW_CALLS, 64);
  windows.push({ window, 'infer() µs/req': usPerRequest });
}
console.log(`\nserver.infer() under sustained load: 64 callers, ${WINDOW_CALLS} calls per window, windows back to back`);
table(windows);

await close();
