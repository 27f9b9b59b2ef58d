import { afterEach, describe, expect, it } from 'vitest';
import type { Logger } from '@tritium/core';
import { rejection, useServerFixture } from '../../core/test/helpers/server-fixture.js';
import { testConfig } from '../../core/test/helpers/repository.js';
import type { RunningService } from '../src/cli/serve.js';
import { shutDown } from '../src/cli/shutdown.js';
import type { RunningFrontend } from '../src/listen.js';
import { startMetricsFrontend } from '../src/metrics/metrics-frontend.js';

const fx = useServerFixture();
let metrics: RunningFrontend | undefined;

afterEach(async () => {
  // A test that shut the service down closed it already: the second close rejects, and that is fine.
  await metrics?.close().catch(() => {});
  metrics = undefined;
});

const input = { INPUT0: { datatype: 'FP32' as const, shape: [4], data: Float32Array.from([1, 2, 3, 4]) } };

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, error: (m) => lines.push(`E ${m}`), warn: (m) => lines.push(`W ${m}`), info: (m) => lines.push(`I ${m}`), verbose: (m) => lines.push(`V ${m}`) };
}

async function service(): Promise<RunningService> {
  const server = await fx.start({ m: { config: testConfig({}) } });
  metrics = await startMetricsFrontend(server, { host: '127.0.0.1', port: 0 });
  return { server, frontends: [{ name: 'Metrics Service', frontend: metrics }] };
}

describe('shutDown', () => {
  it('turns readiness off at once while the services still answer, lets in-flight work finish, then closes the services', async () => {
    const running = await service();
    const url = `http://127.0.0.1:${metrics!.port}/metrics`;
    const slow = running.server.infer('m', { inputs: input, parameters: { delay_ms: 800 } });
    // Let the request reach its instance before the shutdown starts.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const logger = recordingLogger();
    const done = shutDown(running, 10_000, logger);
    expect(running.server.isReady()).toBe(false);
    expect(running.server.isLive()).toBe(false);
    expect((await fetch(url)).status).toBe(200);
    expect((await rejection(running.server.infer('m', { inputs: input }))).code).toBe('UNAVAILABLE');
    expect((await slow).outputs.OUTPUT0!.data).toEqual(Float32Array.from([1, 2, 3, 4]));
    expect(await done).toBe(true);
    await expect(fetch(url)).rejects.toThrow();
    expect(logger.lines).toEqual(['I Waiting for in-flight requests to complete (up to 10 s).']);
  });

  it('fails when the server has not stopped within the exit timeout and the grace time', async () => {
    // The server drains for up to its own exit timeout (30 s here), longer than the shutdown allows.
    const running = await service();
    const slow = running.server.infer('m', { inputs: input, parameters: { delay_ms: 1_500 } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const logger = recordingLogger();
    const started = performance.now();
    expect(await shutDown(running, 100, logger, 200)).toBe(false);
    expect(performance.now() - started).toBeLessThan(1_200);
    expect(logger.lines).toContain('E shutdown did not finish within 0.3 s');
    // The request itself is answered once the server's own drain lets it finish.
    await slow;
  });

  it('reports a service that fails to close, and closes the others', async () => {
    const running = await service();
    const failing: RunningFrontend = { host: '127.0.0.1', port: 1, close: () => Promise.reject(new Error('socket stuck')) };
    const logger = recordingLogger();
    expect(await shutDown({ ...running, frontends: [{ name: 'HTTPService', frontend: failing }, ...running.frontends] }, 1_000, logger)).toBe(false);
    expect(logger.lines).toContain('E closing HTTPService failed: socket stuck');
  });

  it('fails when a service does not close within the exit timeout and the grace time', async () => {
    const running = await service();
    const stuck: RunningFrontend = { host: '127.0.0.1', port: 1, close: () => new Promise(() => {}) };
    const logger = recordingLogger();
    expect(await shutDown({ ...running, frontends: [{ name: 'HTTPService', frontend: stuck }] }, 100, logger, 200)).toBe(false);
    expect(logger.lines).toContain('E shutdown did not finish within 0.3 s');
  });
});
