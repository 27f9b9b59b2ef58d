/**
 * What the request channels (docs/trace.md) cost `server.infer()` on a no-op backend:
 * no subscriber, and a subscriber on every channel, in alternating rounds, beside the
 * backend's execute() called directly (the baseline of core-overhead.ts, so the
 * no-subscriber ratio compares with its figure).
 * Run: npx -y pnpm@10.34.9 bench:channels
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { REQUEST_CHANNELS } from '@tritium/core';
import { alternateRounds, formatSpread, measureRate, median, ratioSpread, table } from './measure.js';
import { noopServing } from './noop-backend.js';

const CALLS_PER_ROUND = 10_000;
const ROUNDS = 15;
const { callDirect, callServer, close } = await noopServing();

// What an APM's listener does at the least: look at the message.
let heard = 0;
const listener = (message: unknown) => {
  if (message) heard++;
};
const names = Object.values(REQUEST_CHANNELS);
const subscribed = async <T>(run: () => Promise<T>): Promise<T> => {
  for (const name of names) subscribe(name, listener);
  try {
    return await run();
  } finally {
    for (const name of names) unsubscribe(name, listener);
  }
};

const rows = [];
for (const callers of [1, 64]) {
  const rate = async (once: () => Promise<unknown>) => (await measureRate(once, CALLS_PER_ROUND, callers)).usPerRequest;
  const rounds = await alternateRounds(
    {
      direct: () => rate(callDirect),
      none: () => rate(callServer),
      all: () => subscribed(() => rate(callServer)),
    },
    ROUNDS,
  );
  rows.push({
    callers,
    'direct µs/req': median(rounds.direct),
    'no subscriber µs/req': median(rounds.none),
    'subscribed µs/req': median(rounds.all),
    'added by subscribers µs/req': median(rounds.all.map((us, i) => us - rounds.none[i]!)),
    'no subscriber / direct': formatSpread(ratioSpread(rounds.none, rounds.direct)),
    'subscribed / no subscriber': formatSpread(ratioSpread(rounds.all, rounds.none)),
  });
}
console.log(`server.infer() on a no-op backend, no subscriber vs one on each of ${names.length} request channels, ${CALLS_PER_ROUND} calls per round, medians (ratios: median (min–max)) of ${ROUNDS} alternating rounds; ${heard} messages heard`);
table(rows);

await close();
