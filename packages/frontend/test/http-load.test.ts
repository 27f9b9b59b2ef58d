import { existsSync, readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRequest } from './helpers/http-client.js';
import { startHttpFixture, type HttpFixture } from './helpers/http-fixture.js';
import { testConfig } from '../../core/test/helpers/repository.js';

const REQUESTS = 10_000;
const CONNECTIONS = 256;
/** Every this many requests, one is malformed JSON. */
const BAD_EVERY = 500;

let fx: HttpFixture;
beforeAll(async () => {
  fx = await startHttpFixture({ simple: { config: testConfig({ count: 2 }) } });
});
afterAll(() => fx.stop());

/** The server's side of the established TCP connections to `port` on 127.0.0.1, read from the kernel's table. */
function serverConnections(port: number): number {
  const local = `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .filter((line) => {
      const [, address, , state] = line.trim().split(/\s+/);
      return address === local && state === '01';
    }).length;
}

describe('HTTP frontend under load', () => {
  it(`answers ${REQUESTS} requests over ${CONNECTIONS} keep-alive connections, malformed ones with 400, and leaves no connection behind`, async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
    const started = performance.now();
    const results = await Promise.all(
      Array.from({ length: REQUESTS }, async (_, i) => {
        const bad = i % BAD_EVERY === BAD_EVERY - 1;
        const data = [i, i + 1, i + 2, i + 3];
        const body = bad ? `{"inputs": [${i}` : JSON.stringify({ id: String(i), inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data }] });
        const res = await httpRequest(fx.url, { path: '/v2/models/simple/infer', agent, body });
        const json = JSON.parse(res.body.toString());
        return bad
          ? res.status === 400 && typeof json.error === 'string' && json.error.startsWith('failed to parse the inference request JSON')
          : res.status === 200 && json.id === String(i) && JSON.stringify(json.outputs[0].data) === JSON.stringify(data);
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    expect(results.filter((ok) => !ok)).toHaveLength(0);
    expect(seconds).toBeLessThan(20);
    const open = existsSync('/proc/net/tcp') ? serverConnections(fx.frontend.port) : undefined;
    if (open !== undefined) expect(open).toBeLessThanOrEqual(CONNECTIONS);

    agent.destroy();
    if (open !== undefined) await expect.poll(() => serverConnections(fx.frontend.port), { timeout: 5000 }).toBe(0);
    else console.warn('skipping the connection count: no /proc/net/tcp on this system');
    const closing = performance.now();
    await fx.frontend.close();
    expect(performance.now() - closing).toBeLessThan(1000);
  });
});
