import { Buffer } from 'node:buffer';
import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRequest, parseInferResponse } from './helpers/http-client.js';
import { startHttpFixture, type HttpFixture } from './helpers/http-fixture.js';
import { allTypesModel, input, output } from './helpers/http-models.js';

let fx: HttpFixture;
beforeAll(async () => {
  fx = await startHttpFixture({ all_types: allTypesModel });
});
afterAll(() => fx.stop());

/** A JSON inference request of about `bytes` bytes: one flat FP32 tensor, nested in rows of two when asked. */
function largeRequest(bytes: number, rows: boolean): { body: string; values: Float32Array } {
  const values = Float32Array.from({ length: Math.floor(bytes / (rows ? 12 : 9)) }, (_, i) => (i % 1000) + 0.25);
  const data = rows ? values.join(',').replace(/([^,]+),([^,]+)(,|$)/g, '[$1,$2]$3') : values.join(',');
  const shape = [values.length];
  const body = `{"inputs": [{"name": "${input('FP32')}", "datatype": "FP32", "shape": ${JSON.stringify(shape)}, "data": [${data}]}], "outputs": [{"name": "${output('FP32')}", "parameters": {"binary_data": true}}]}`;
  return { body, values };
}

describe('HTTP /infer with a large JSON body', () => {
  it('keeps answering other clients while it parses, within a bound far below the parse', async () => {
    const requests = [largeRequest(12 * 1024 * 1024, false), largeRequest(8 * 1024 * 1024, true)];
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const latencies: number[] = [];
    const started = performance.now();
    let done = false;
    const probing = (async () => {
      while (!done) {
        const sent = performance.now();
        const res = await httpRequest(fx.url, { path: '/v2/health/ready', method: 'GET', agent });
        expect(res.status).toBe(200);
        latencies.push(performance.now() - sent);
      }
    })();
    const answers = await Promise.all(requests.map(({ body }) => httpRequest(fx.url, { path: '/v2/models/all_types/infer', body })));
    const elapsed = performance.now() - started;
    done = true;
    await probing;
    agent.destroy();
    answers.forEach((res, index) => {
      expect(res.status, res.body.subarray(0, 200).toString()).toBe(200);
      const result = parseInferResponse(res.body, res.headers['inference-header-content-length']);
      const { values } = requests[index]!;
      expect(Buffer.compare(result.binary[output('FP32')]!, new Uint8Array(values.buffer))).toBe(0);
    });
    const slowest = Math.max(...latencies);
    // Parsed in one go, the bodies would hold a probe for most of `elapsed`; sliced, a probe waits for a slice or two.
    expect(latencies.length, `probes answered in ${elapsed.toFixed(0)} ms`).toBeGreaterThan(5);
    expect(slowest, `slowest of ${latencies.length} probes, while the bodies took ${elapsed.toFixed(0)} ms`).toBeLessThan(Math.max(250, elapsed / 5));
  }, 60_000);
});
