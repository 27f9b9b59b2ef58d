import { createServer } from 'node:net';
import { once } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { InferenceServer } from '@tritium/core';
import { useServerFixture } from '../../core/test/helpers/server-fixture.js';
import { testConfig } from '../../core/test/helpers/repository.js';
import type { RunningFrontend } from '../src/listen.js';
import { METRICS_CONTENT_TYPE, METRICS_PATH, startMetricsFrontend } from '../src/metrics/metrics-frontend.js';

const fx = useServerFixture();
let frontend: RunningFrontend | undefined;

afterEach(async () => {
  await frontend?.close();
  frontend = undefined;
});

const input = { INPUT0: { datatype: 'FP32' as const, shape: [4], data: Float32Array.from([1, 2, 3, 4]) } };

async function started(options: Parameters<typeof fx.start>[1] = {}): Promise<string> {
  const server = await fx.start({ m: { config: testConfig({}) } }, options);
  frontend = await startMetricsFrontend(server, { host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${frontend.port}`;
}

describe('startMetricsFrontend', () => {
  it("answers GET /metrics with the server's Prometheus text, in the exposition format's content type", async () => {
    const base = await started();
    await fx.server!.infer('m', { inputs: input });
    const response = await fetch(`${base}${METRICS_PATH}`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe(METRICS_CONTENT_TYPE);
    const text = await response.text();
    expect(text).toContain('nv_inference_request_success{model="m",version="1"} 1');
    // The same families as server.metrics() (host metrics' values move between two reads).
    const families = (prometheus: string) => prometheus.split('\n').filter((line) => line.startsWith('# TYPE'));
    expect(families(text)).toEqual(families(await fx.server!.metrics()));
  });

  it('takes a trailing slash and a query string, as Triton does', async () => {
    const base = await started();
    expect((await fetch(`${base}/metrics/`)).status).toBe(200);
    expect((await fetch(`${base}/metrics?name[]=nv_inference_count`)).status).toBe(200);
  });

  it('answers 404 on other paths and 405 on other methods, saying where metrics are', async () => {
    const base = await started();
    const missing = await fetch(`${base}/v2/health/ready`);
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain('GET /metrics');
    const posted = await fetch(`${base}/metrics`, { method: 'POST', body: 'x' });
    expect(posted.status).toBe(405);
    expect(posted.headers.get('allow')).toBe('GET');
  });

  it('answers 503 saying metrics are turned off when the server has none', async () => {
    const base = await started({ metrics: false });
    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(503);
    expect(await response.text()).toContain('metrics are turned off');
  });

  it('reports the port it bound when asked for port 0, and stops listening once closed, however often close() is called', async () => {
    const base = await started();
    expect(frontend!.port).toBeGreaterThan(0);
    expect(frontend!.host).toBe('127.0.0.1');
    // A keep-alive connection left idle must not hold close() up.
    await (await fetch(`${base}/metrics`, { headers: { connection: 'keep-alive' } })).text();
    // Closing twice is harmless: both calls wait on the one close.
    await Promise.all([frontend!.close(), frontend!.close()]);
    frontend = undefined;
    await expect(fetch(`${base}/metrics`)).rejects.toThrow();
  });

  it('answers a scrape under way when closed, then closes without waiting on its keep-alive connection', async () => {
    let release!: () => void;
    const slow = { metrics: () => new Promise<string>((resolve) => (release = () => resolve('slow_metric 1\n'))) };
    frontend = await startMetricsFrontend(slow as unknown as InferenceServer, { host: '127.0.0.1', port: 0 });
    const scrape = fetch(`http://127.0.0.1:${frontend.port}/metrics`).then(async (r) => [r.status, await r.text()]);
    await vi.waitFor(() => expect(release).toBeDefined());
    const started = performance.now();
    const closed = frontend.close();
    frontend = undefined;
    release();
    expect(await scrape).toEqual([200, 'slow_metric 1\n']);
    await closed;
    // Well under the 5 s for which Node keeps an idle connection open.
    expect(performance.now() - started).toBeLessThan(2_500);
  });

  it('cuts off a scrape still under way closeTimeoutMs after close()', async () => {
    const hung = { metrics: () => new Promise<string>(() => {}) };
    frontend = await startMetricsFrontend(hung as unknown as InferenceServer, { host: '127.0.0.1', port: 0, closeTimeoutMs: 200 });
    const scrape = fetch(`http://127.0.0.1:${frontend.port}/metrics`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    await frontend.close();
    frontend = undefined;
    await expect(scrape).rejects.toThrow();
    expect(performance.now() - started).toBeGreaterThanOrEqual(150);
    expect(performance.now() - started).toBeLessThan(2_500);
  });

  it('rejects when its port is taken, saying so, and refuses options out of range', async () => {
    const server = await fx.start({ m: { config: testConfig({}) } });
    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    try {
      const port = (taken.address() as { port: number }).port;
      await expect(startMetricsFrontend(server, { host: '127.0.0.1', port })).rejects.toThrow(
        expect.objectContaining({ code: 'UNAVAILABLE', message: `metrics frontend: socket '127.0.0.1:${port}' already in use` }),
      );
    } finally {
      taken.close();
    }
    await expect(startMetricsFrontend(server, { port: 70_000 })).rejects.toThrow('metrics frontend option `port` must be an integer from 0 to 65535, got 70000');
    await expect(startMetricsFrontend(server, { port: 0, closeTimeoutMs: -1 })).rejects.toThrow('metrics frontend option `closeTimeoutMs` must be an integer');
  });
});
