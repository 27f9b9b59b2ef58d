/**
 * Large JSON bodies over HTTP (issue 18): a 64 MiB flat array of numbers and a 64 MiB
 * body of the same numbers nested in rows of one, sent at once, while another client asks
 * /v2/health/ready every 10 ms. Prints each body's time, the probes' latencies, and the
 * server's RSS before, at its peak and after a GC. The clients run in a child process,
 * so their strings are not in the server's heap.
 * Run: node --expose-gc --import tsx bench/http-large-json.ts
 */
import { fork } from 'node:child_process';
import { rm } from 'node:fs/promises';
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { InferenceServer } from '@tritium/core';
import { startHttpFrontend } from '@tritium/frontend';
import { benchRepository, noopBackend } from './noop-backend.js';

const BODY_BYTES = 64 * 1024 * 1024 - 1024;

interface ClientReport {
  readonly bodies: Array<{ name: string; bytes: number; status: number; ms: number }>;
  readonly probes: number[];
}

if (process.argv[2] === 'client') {
  const url = process.argv[3]!;
  const post = (body: Buffer) =>
    new Promise<number>((resolve, reject) => {
      const req = http.request(`${url}/v2/models/echo/infer`, { method: 'POST', headers: { 'content-length': body.length } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode!));
      });
      req.on('error', reject);
      req.end(body);
    });
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const probe = () =>
    new Promise<number>((resolve, reject) => {
      const sent = performance.now();
      http.get(`${url}/v2/health/ready`, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(performance.now() - sent));
      }).on('error', reject);
    });
  // Numbers as a client prints floats; the nested body holds each in a row of its own.
  const numbers = (count: number) => Array.from({ length: count }, (_, i) => ((i * 7919) % 100_000) / 64).join(',');
  const body = (data: string, count: number) =>
    Buffer.from(`{"inputs":[{"name":"INPUT0","datatype":"FP32","shape":[${count}],"data":[${data}]}],"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}}]}`);
  const flatCount = Math.floor(BODY_BYTES / 8);
  let flat = numbers(flatCount);
  while (flat.length > BODY_BYTES - 200) flat = flat.slice(0, flat.lastIndexOf(','));
  const flatElements = flat.split(',').length;
  const nestedText = `[${flat.replaceAll(',', '],[')}]`.slice(0, BODY_BYTES - 200);
  const nested = nestedText.slice(0, nestedText.lastIndexOf(']') + 1);
  const nestedElements = nested.split('[').length - 1;
  const bodies = [
    { name: 'flat', bytes: 0, buffer: body(flat, flatElements) },
    { name: 'nested', bytes: 0, buffer: body(nested, nestedElements) },
  ];
  const probes: number[] = [];
  let done = false;
  const probing = (async () => {
    while (!done) {
      probes.push(await probe());
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  const results = await Promise.all(
    bodies.map(async ({ name, buffer }) => {
      const started = performance.now();
      const status = await post(buffer);
      return { name, bytes: buffer.length, status, ms: performance.now() - started };
    }),
  );
  done = true;
  await probing;
  agent.destroy();
  process.send!({ bodies: results, probes } satisfies ClientReport, () => process.exit(0));
} else {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with node --expose-gc');
  const repository = await benchRepository('tritium-bench-large-json-', {
    echo: `backend: "noop"\ninput { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] }\noutput { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] }\n`,
  });
  const server = await InferenceServer.start({ modelRepository: repository, backends: [noopBackend()] });
  const frontend = await startHttpFrontend(server, { host: '127.0.0.1', port: 0 });
  const mb = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MB`;
  gc();
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const child = fork(fileURLToPath(import.meta.url), ['client', `http://127.0.0.1:${frontend.port}`], { execArgv: ['--import', 'tsx'] });
  const report = await new Promise<ClientReport>((resolve, reject) => {
    child.once('message', (message) => resolve(message as ClientReport));
    child.once('error', reject);
  });
  clearInterval(sampler);
  // Array buffers are freed a little after the collection that finds them dead.
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    gc();
  }
  const after = process.memoryUsage().rss;
  for (const { name, bytes, status, ms } of report.bodies) console.log(`${name}: ${mb(bytes)} body, HTTP ${status}, ${ms.toFixed(0)} ms`);
  const sorted = [...report.probes].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!.toFixed(1);
  console.log(`/v2/health/ready meanwhile: ${sorted.length} probes, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${sorted.at(-1)!.toFixed(1)} ms`);
  console.log(`server RSS: ${mb(before)} before, ${mb(peak)} at peak, ${mb(after)} after a GC (${mb(after - before)} over)`);
  await frontend.close();
  await server.stop();
  await rm(repository, { recursive: true, force: true });
}
