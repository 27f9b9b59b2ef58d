/**
 * What the rate limiter (ServerOptions.rateLimit, docs/batching.md) costs server.infer()
 * on no-op models whose instances need one resource: mode execution_count against mode
 * off, and a second off server against the first for the A/A spread, in alternating
 * rounds, at 1 and 64 callers. Model `one` has one instance needing the resource's one
 * copy (the limiter's bookkeeping alone); model `two` has two instances contending for
 * it (each run hands the copy on to the other instance).
 * Run: npx -y pnpm@10.34.9 bench:rate-limit
 */
import { rm } from 'node:fs/promises';
import { InferenceServer, type RateLimitOptions } from '@tritium/core';
import { alternateRounds, formatSpread, measureRate, median, ratioSpread, table } from './measure.js';
import { benchRepository, noopBackend, noopConfig, noopInput as input } from './noop-backend.js';

const CALLS_PER_ROUND = 10_000;
const ROUNDS = 15;
const limited = (count: number) => noopConfig(`max_batch_size: 8\ninstance_group { count: ${count} kind: KIND_CPU rate_limiter { resources [ { name: "R" count: 1 } ] } }`);
const repository = await benchRepository('tritium-bench-rate-limit-', { one: limited(1), two: limited(2) });
const serve = (rateLimit: RateLimitOptions) => InferenceServer.start({ modelRepository: repository, backends: [noopBackend()], rateLimit });
const servers = { off: await serve({ mode: 'off' }), offAgain: await serve({ mode: 'off' }), limited: await serve({ mode: 'execution_count' }) };
const rate = (server: InferenceServer, model: string, callers: number) => async () =>
  (await measureRate(() => server.infer(model, { inputs: { INPUT0: input } }), CALLS_PER_ROUND, callers)).usPerRequest;

const rows = [];
for (const model of ['one', 'two']) {
  for (const callers of [1, 64]) {
    const rounds = await alternateRounds({ off: rate(servers.off, model, callers), offAgain: rate(servers.offAgain, model, callers), limited: rate(servers.limited, model, callers) }, ROUNDS);
    rows.push({
      model,
      callers,
      'off µs/req': median(rounds.off),
      'execution_count µs/req': median(rounds.limited),
      'A/A: off / off': formatSpread(ratioSpread(rounds.offAgain, rounds.off)),
      'execution_count / off': formatSpread(ratioSpread(rounds.limited, rounds.off)),
    });
  }
}
console.log(`server.infer() on no-op models needing the one copy of resource R (one: 1 instance; two: 2 instances), ${CALLS_PER_ROUND} calls per round, medians (ratios: median (min–max)) of ${ROUNDS} alternating rounds`);
table(rows);
for (const server of Object.values(servers)) await server.stop();
await rm(repository, { recursive: true, force: true });
