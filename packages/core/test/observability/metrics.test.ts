import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { Counter, Registry } from 'prom-client';
import { InferenceServer } from '@tritium/core';
import { TempRepository, testConfig } from '../helpers/repository.js';
import { rejection, useServerFixture } from '../helpers/server-fixture.js';
import { sleep, testBackend } from '../helpers/test-backend.js';

const fx = useServerFixture();
const input = { INPUT0: { datatype: 'FP32' as const, shape: [1, 4], data: new Float32Array(4) } };
const plainInput = { INPUT0: { datatype: 'FP32' as const, shape: [4], data: new Float32Array(4) } };

/** The value of one sample line, e.g. value(text, 'nv_inference_count{model="m",version="1"}'). */
function value(text: string, sample: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line === undefined ? undefined : Number(line.slice(sample.length + 1));
}
const m = '{model="m",version="1"}';
const DECOUPLED = `backend: "test"
input { name: "IN" data_type: TYPE_INT32 dims: [ 1 ] }
output { name: "OUT" data_type: TYPE_INT32 dims: [ 1 ] }
model_transaction_policy { decoupled: true }
parameters { key: "behavior" value { string_value: "repeat" } }`;
const failure = (reason: string) => `nv_inference_request_failure{model="m",version="1",reason="${reason}"}`;

describe('server.metrics()', () => {
  it("counts successes, failures by Triton's reasons, inferences and executions, with Triton's names and labels", async () => {
    const server = await fx.start({
      m: { config: testConfig({ maxBatchSize: 4, extra: 'dynamic_batching { default_queue_policy { max_queue_size: 1 } }' }) },
    });
    await server.infer('m', { inputs: input });
    await rejection(server.infer('m', { inputs: input, parameters: { fail: 'on purpose' } }));
    const controller = new AbortController();
    const cancelled = server.infer('m', { inputs: input, parameters: { delay_ms: 200 }, signal: controller.signal });
    await sleep(20);
    // The instance is busy: one request waits in the queue (pending), the next finds the queue full.
    const waiting = server.infer('m', { inputs: input });
    const refused = rejection(server.infer('m', { inputs: input }));
    expect(value(await server.metrics(), `nv_inference_pending_request_count${m}`)).toBe(1);
    controller.abort();
    await rejection(cancelled);
    await refused;
    await waiting;
    const text = await server.metrics();
    expect(value(text, `nv_inference_request_success${m}`)).toBe(2);
    expect(value(text, failure('BACKEND'))).toBe(1);
    expect(value(text, failure('CANCELED'))).toBe(1);
    expect(value(text, failure('REJECTED'))).toBe(1);
    expect(value(text, failure('OTHER'))).toBe(0);
    expect(value(text, `nv_inference_count${m}`)).toBe(2);
    expect(value(text, `nv_inference_exec_count${m}`)).toBeGreaterThanOrEqual(2);
    expect(value(text, `nv_inference_pending_request_count${m}`)).toBe(0);
    expect(value(text, `nv_model_load_duration_secs${m}`)).toBeGreaterThan(0);
    expect(value(text, `nv_inference_request_duration_us${m}`)).toBeGreaterThan(0);
    expect(value(text, `nv_inference_queue_duration_us${m}`)).toBeGreaterThan(0);
    expect(value(text, `nv_inference_compute_infer_duration_us${m}`)).toBeGreaterThan(0);
    expect(text).toContain('# TYPE nv_inference_request_success counter');
    expect(text).toContain('# TYPE nv_inference_pending_request_count gauge');
    // Summaries and Triton's histogram are off by default, as in Triton; the batch sizes formed are always there.
    expect(text).not.toContain('nv_inference_request_summary_us');
    expect(text).not.toContain('nv_inference_first_response_histogram_ms');
    expect(value(text, 'tritium_inference_batch_executions{model="m",version="1",batch_size="1"}')).toBeGreaterThanOrEqual(2);
  });

  it('adds summaries and histograms when asked, and times the first response of a decoupled model', async () => {
    const server = await fx.start(
      { m: { config: testConfig({}) }, r: { config: DECOUPLED } },
      { metrics: { summaryLatencies: true, histogramLatencies: true, counterLatencies: false } },
    );
    for (let i = 0; i < 5; i++) await server.infer('m', { inputs: plainInput });
    for await (const _ of server.inferStream('r', { inputs: { IN: { datatype: 'INT32', shape: [1], data: new Int32Array([7]) } }, parameters: { count: 2 } })) {
      // two responses
    }
    const text = await server.metrics();
    expect(value(text, `nv_inference_request_summary_us_count${m}`)).toBe(5);
    expect(value(text, `nv_inference_request_summary_us{quantile="0.99",model="m",version="1"}`)).toBeGreaterThan(0);
    expect(value(text, `nv_inference_queue_summary_us_count${m}`)).toBe(5);
    expect(value(text, `tritium_inference_request_histogram_us_count${m}`)).toBe(5);
    expect(value(text, `tritium_inference_request_histogram_us_bucket{le="+Inf",model="m",version="1"}`)).toBe(5);
    expect(value(text, 'nv_inference_first_response_histogram_ms_count{model="r",version="1"}')).toBe(1);
    expect(value(text, `nv_inference_first_response_histogram_ms_count${m}`)).toBeUndefined();
    expect(text).not.toContain('nv_inference_request_duration_us');
  });

  it("puts Tritium's metrics in the application's own registry, beside its metrics", async () => {
    const registry = new Registry();
    new Counter({ name: 'app_requests_total', help: 'the application’s own', registers: [registry] }).inc(3);
    const server = await fx.start({ m: { config: testConfig({}) } }, { metrics: { registry } });
    await server.infer('m', { inputs: plainInput });
    const text = await registry.metrics();
    expect(value(text, 'app_requests_total')).toBe(3);
    expect(value(text, `nv_inference_request_success${m}`)).toBe(1);
    expect(value(await server.metrics(), 'app_requests_total')).toBe(3);
  });

  it('reports host CPU and memory from /proc, and GPU metrics only where nvidia-smi answers', async () => {
    const server = await fx.start({ m: { config: testConfig({}) } });
    const text = await server.metrics();
    const utilization = value(text, 'nv_cpu_utilization')!;
    expect(utilization).toBeGreaterThanOrEqual(0);
    expect(utilization).toBeLessThanOrEqual(1);
    expect(value(text, 'nv_cpu_memory_total_bytes')).toBeGreaterThan(value(text, 'nv_cpu_memory_used_bytes')!);
    let gpu = true;
    try {
      execFileSync('nvidia-smi', ['-L'], { stdio: 'ignore', timeout: 2000 });
    } catch {
      gpu = false;
    }
    if (!gpu) expect(text).not.toContain('nv_gpu_');
  });

  it('takes its metrics out of the registry at stop, so the registry serves the next server; drops an unloaded version’s series', async () => {
    const registry = new Registry();
    const first = await fx.start({ m: { config: testConfig({}) } }, { metrics: { registry, histogramLatencies: true }, modelControlMode: 'explicit', startupModels: ['m'] });
    await first.infer('m', { inputs: plainInput });
    expect(value(await registry.metrics(), `tritium_inference_request_histogram_us_count${m}`)).toBe(1);
    await first.unloadModel('m');
    expect(await registry.metrics()).not.toContain('model="m"');
    await first.stop();
    expect(registry.getMetricsAsArray()).toEqual([]);
    const second = (fx.server = await InferenceServer.start({ modelRepository: fx.repo!.path, backends: [testBackend()], metrics: { registry } }));
    await second.infer('m', { inputs: plainInput });
    expect(value(await second.metrics(), `nv_inference_request_success${m}`)).toBe(1);
  });

  it('exports a backend’s own metric families, and takes in a label that appears later', async () => {
    const values: Array<{ labels: Record<string, string>; value: number }> = [];
    const backend = { ...testBackend(), customMetrics: () => [{ name: 'my_total', description: 'mine', kind: 'counter' as const, metrics: values }] };
    fx.repo = await TempRepository.create({ m: { config: testConfig({}) } });
    const server = (fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, backends: [backend] }));
    expect(await server.metrics()).toContain('# TYPE my_total counter');
    values.push({ labels: { model: 'm' }, value: 2 });
    expect(value(await server.metrics(), 'my_total{model="m"}')).toBe(2);
    values.push({ labels: { model: 'm', kind: 'x' }, value: 5 });
    const text = await server.metrics();
    expect(value(text, 'my_total{model="m",kind="x"}')).toBe(5);
  });

  it('exports a backend’s histogram that carries its buckets, and leaves one without them out', async () => {
    const histogram = { upperBounds: [0.1, 1], cumulativeCounts: [1, 3], sum: 1.5, count: 4 };
    const backend = {
      ...testBackend(),
      customMetrics: () => [
        { name: 'my_seconds', description: 'mine', kind: 'histogram' as const, metrics: [{ labels: { model: 'm' }, value: 1.5, histogram }] },
        { name: 'bucketless', description: 'no buckets', kind: 'histogram' as const, metrics: [{ labels: { model: 'm' }, value: 1 }] },
      ],
    };
    fx.repo = await TempRepository.create({ m: { config: testConfig({}) } });
    const server = (fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, backends: [backend] }));
    const text = await server.metrics();
    expect(text).toContain('# TYPE my_seconds histogram');
    expect(value(text, 'my_seconds_bucket{le="0.1",model="m"}')).toBe(1);
    expect(value(text, 'my_seconds_bucket{le="1",model="m"}')).toBe(3);
    expect(value(text, 'my_seconds_bucket{le="+Inf",model="m"}')).toBe(4);
    expect(value(text, 'my_seconds_sum{model="m"}')).toBe(1.5);
    expect(value(text, 'my_seconds_count{model="m"}')).toBe(4);
    expect(text).not.toContain('bucketless');
  });

  it('refuses metrics() when turned off', async () => {
    const server = await fx.start({ m: { config: testConfig({}) } }, { metrics: false });
    expect((await rejection(server.metrics())).code).toBe('UNAVAILABLE');
  });
});
