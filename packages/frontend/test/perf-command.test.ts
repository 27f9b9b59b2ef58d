import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferenceServer } from '@tritium/core';
import { startGrpcFrontend, startHttpFrontend, type RunningFrontend } from '@tritium/frontend';
import { HttpPerfClient } from '../src/perf/http-perf-client.js';
import { InProcessClient } from '../src/perf/inprocess-client.js';
import { measureLevel } from '../src/perf/measurement.js';
import { perfMain } from '../src/perf/perf-command.js';
import { parsePerfArguments } from '../src/perf/perf-options.js';
import { LEGEND_LEFT } from '../src/perf/perf-plot.js';
import { UsageError } from '../src/cli/usage-error.js';
import { TempRepository } from '../../core/test/helpers/repository.js';
import { newProbe, testBackend } from '../../core/test/helpers/test-backend.js';
import { REPEAT } from './helpers/grpc-models.js';
import { useGrpcFixture } from './helpers/grpc-fixture.js';
import { findChromium, renderedPixels } from './helpers/headless-chromium.js';

const TINY = fileURLToPath(new URL('../../backend-onnx/models/tiny.onnx', import.meta.url));
/** As deploy/test/packages.test.ts's TINY_CONFIG: x + 1 on one FP32 element, batching up to 8. */
const TINY_CONFIG = `backend: "onnxruntime"
max_batch_size: 8
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] }
`;
const ACCUMULATOR = fileURLToPath(new URL('../../backend-onnx/models/accumulator.onnx', import.meta.url));
/** A running sum kept in implicit state: a request without a sequence id is refused. */
const ACCUMULATOR_CONFIG = `platform: "onnxruntime_onnx"
max_batch_size: 8
input { name: "INPUT" data_type: TYPE_FP32 dims: [ 1 ] }
output { name: "OUTPUT" data_type: TYPE_FP32 dims: [ 1 ] }
sequence_batching {
  direct { }
  state { input_name: "INPUT_STATE" output_name: "OUTPUT_STATE" data_type: TYPE_FP32 dims: [ 1 ]
    initial_state { data_type: TYPE_FP32 dims: [ 1 ] zero_data: true name: "zero" } }
}`;
const CSV_HEADER =
  'Concurrency,Inferences/Second,Client Send,Network+Server Send/Recv,Server Queue,Server Compute Input,Server Compute Infer,Server Compute Output,Client Recv,p50 latency,p90 latency,p95 latency,p99 latency';
/** Short windows, few of them: the tests check the report, not the figures. */
const QUICK = ['-p', '100', '--max-trials', '4', '-s', '50'];

let directory: string;
let repository: string;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'tritium-perf-'));
  repository = join(directory, 'models');
  await mkdir(join(repository, 'tiny', '1'), { recursive: true });
  await copyFile(TINY, join(repository, 'tiny', '1', 'model.onnx'));
  await writeFile(join(repository, 'tiny', 'config.pbtxt'), TINY_CONFIG);
  await mkdir(join(repository, 'accumulator', '1'), { recursive: true });
  await copyFile(ACCUMULATOR, join(repository, 'accumulator', '1', 'model.onnx'));
  await writeFile(join(repository, 'accumulator', 'config.pbtxt'), ACCUMULATOR_CONFIG);
});

afterAll(() => rm(directory, { recursive: true, force: true }));

/** The command run in this process, its two streams kept. */
async function perf(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await perfMain(argv, { out: { write: (t: string) => (out += t) }, err: { write: (t: string) => (err += t) } });
  return { code, out, err };
}

/** The UsageError message the options are refused with. */
function refusal(...argv: string[]): string {
  const thrown = catching(() => parsePerfArguments(argv));
  expect(thrown, `accepted: ${argv.join(' ')}`).toBeInstanceOf(UsageError);
  return (thrown as Error).message;
}

function catching(call: () => unknown): unknown {
  try {
    call();
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('tritium perf options', () => {
  it("reads perf_analyzer's names and short aliases", () => {
    const options = parsePerfArguments(['-m', 'tiny', '-x', '1', '-b', '4', '-i', 'grpc', '-u', 'h:9', '--concurrency-range', '2:8:3', '-p', '250', '--percentile=95', '-s', '5', '-r', '7', '-f', 'a.csv', '--shape', 'IN:3,4'])!;
    expect(options).toMatchObject({ model: 'tiny', version: '1', batchSize: 4, protocol: 'grpc', url: 'h:9', measurementIntervalMs: 250, percentile: 95, stabilityPercentage: 5, maxTrials: 7, csvFile: 'a.csv' });
    expect(options.load).toEqual({ kind: 'concurrency', levels: [2, 5, 8] });
    expect(options.shapes.get('IN')).toEqual([3, 4]);
    expect(parsePerfArguments(['-m', 'm', '--request-rate-range', '0.5:1.5:0.5'])!.load).toEqual({ kind: 'request-rate', levels: [0.5, 1, 1.5] });
    expect(parsePerfArguments(['-m', 'm'])!).toMatchObject({ protocol: 'http', url: 'localhost:8000', batchSize: 1, measurementIntervalMs: 5000, stabilityPercentage: 10, maxTrials: 10, load: { levels: [1] } });
    expect(parsePerfArguments(['--help'])).toBeUndefined();
  });

  it('refuses an unknown option, a bad range and the options not built, naming them', () => {
    expect(refusal('-m', 'm', '--frobnicate')).toBe("unknown option '--frobnicate' (tritium perf --help lists the options)");
    expect(refusal('-m', 'm', '--concurrency-range', '4:2')).toMatch(/--concurrency-range: end must not be less than start/);
    expect(refusal('-m', 'm', '--concurrency-range', '1:x')).toMatch(/--concurrency-range must be start\[:end\[:step\]\]/);
    expect(refusal('-m', 'm', '--concurrency-range', '1.5')).toMatch(/whole/);
    expect(refusal('-m', 'm', '--concurrency-range', '1:0')).toMatch(/latency-threshold/);
    expect(refusal('-m', 'm', '--concurrency-range', '0')).toMatch(/start must be greater than 0/);
    expect(refusal('-m', 'm', '--concurrency-range', '1', '--request-rate-range', '1')).toMatch(/not both/);
    expect(refusal('-m', 'm', '--sequence-id-range', '1:4')).toMatch(/^--sequence-id-range is not supported by tritium perf/);
    expect(refusal('-m', 'm', '--streaming')).toMatch(/^--streaming needs -i grpc or -i inprocess/);
    expect(refusal('-m', 'm', '-i', 'inprocess', '--model-repository', '/r', '--shared-memory', 'system')).toMatch(/^--shared-memory system needs -i http or -i grpc/);
    expect(refusal('-m', 'm', '--shared-memory', 'cuda')).toMatch(/^--shared-memory cuda is not supported by tritium perf/);
    expect(refusal('-m', 'm', '--output-shared-memory-size', '64')).toMatch(/^--output-shared-memory-size is not supported by tritium perf/);
    expect(refusal('--concurrency-range', '1')).toBe('-m <model> is required');
    expect(refusal('-m', 'm', '-i', 'inprocess')).toMatch(/--model-repository/);
    expect(refusal('-m', 'm', '-i', 'udp')).toMatch(/-i must be one of inprocess, http, grpc/);
    expect(refusal('-m', 'm', '--shape', 'IN')).toMatch(/--shape must be/);
  });

  it('exits 2 for a command line that cannot run, and 1 for an unknown model', async () => {
    const bad = await perf('-m', 'tiny', '--bogus');
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("unknown option '--bogus'");
    const unknown = await perf('-m', 'nope', '-i', 'inprocess', '--model-repository', repository, ...QUICK);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/tritium perf: model 'nope': .*nope/);
    const batch = await perf('-m', 'tiny', '-b', '9', '-i', 'inprocess', '--model-repository', repository, ...QUICK);
    expect(batch.code).toBe(2);
    expect(batch.err).toContain("-b 9 is more than the model's max_batch_size 8");
  });
});

describe('tritium perf runs', () => {
  it('measures an in-process model per concurrency level: the report, the CSV and the plot', async () => {
    const csv = join(directory, 'inprocess.csv');
    const plot = join(directory, 'latency.html');
    const run = await perf('-m', 'tiny', '-i', 'inprocess', '--model-repository', repository, '--concurrency-range', '1:3:2', '-b', '2', ...QUICK, '-f', csv, '--plot', plot);
    expect(run.err).toMatch(/Pass \[1\] throughput: [\d.]+ infer\/sec\. Avg latency: \d+ usec/);
    expect(run.code).toBe(0);
    expect(run.out).toMatch(/^\*\*\* Measurement Settings \*\*\*\n {2}Batch size: 2\n {2}Service Kind: Tritium in-process\n/);
    for (const level of [1, 3]) {
      const block = run.out.split(`Request concurrency: ${level}\n`)[1]!.split('\n\n')[0]!;
      expect(block).toMatch(/Request count: [1-9]\d*\n/);
      expect(block).toMatch(/Throughput: [\d.]+ infer\/sec/);
      expect(block).toMatch(/Avg latency: \d+ usec \(standard deviation \d+ usec\)/);
      for (const p of [50, 90, 95, 99]) expect(block).toMatch(new RegExp(`p${p} latency: \\d+ usec`));
      // Batch 2: the server counts two inferences per request.
      const requests = Number(block.match(/Successful request count: (\d+)/)![1]);
      expect(requests).toBeGreaterThan(0);
      expect(Number(block.match(/Inference count: (\d+)/)![1])).toBe(2 * requests);
      expect(block).toMatch(/Avg request latency: \d+ usec \(overhead \d+ usec \+ queue \d+ usec \+ compute input \d+ usec \+ compute infer \d+ usec \+ compute output \d+ usec\)/);
    }
    expect(run.out).toMatch(/Inferences\/Second vs\. Client Average Batch Latency\nConcurrency: 1, throughput: [\d.]+ infer\/sec, latency \d+ usec\nConcurrency: 3, /);

    const [header, ...rows] = (await readFile(csv, 'utf8')).trimEnd().split('\n');
    expect(header).toBe(CSV_HEADER);
    expect(rows).toHaveLength(2);
    const parsed = rows.map((row) => row.split(',').map(Number));
    for (const row of parsed) {
      expect(row).toHaveLength(13);
      expect(row.every(Number.isFinite)).toBe(true);
      expect(row[1]).toBeGreaterThan(0);
      expect(row[9]! <= row[10]! && row[10]! <= row[11]! && row[11]! <= row[12]!).toBe(true);
    }
    // Sorted by throughput, as perf_analyzer's.
    expect(parsed[0]![1]! <= parsed[1]![1]!).toBe(true);
    expect(parsed.map((row) => row[0]).sort()).toEqual([1, 3]);

    const html = await readFile(plot, 'utf8');
    expect(html).toMatch(/^<!DOCTYPE html>/);
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org)/);
    expect(html.match(/<polyline /g)).toHaveLength(5);
    for (const name of ['p50', 'p90', 'p95', 'p99']) expect(html).toContain(`>${name}</text>`);
    expect(html.match(/<circle /g)).toHaveLength(10);
  });

  it('draws a plot that a real headless Chromium renders, its lines and points in the series colours', async (context) => {
    const found = findChromium();
    if ('skip' in found) return context.skip(found.skip);
    const plot = join(directory, 'rendered.html');
    const run = await perf('-m', 'tiny', '-i', 'inprocess', '--model-repository', repository, '--concurrency-range', '1:2:1', ...QUICK, '--plot', plot);
    expect(run.code).toBe(0);
    // Pixels of each series' colour (p50, p90, p95, p99, avg) in the screenshot: the lines were drawn, not just the page.
    const pixels = renderedPixels(found.chromium, plot, join(directory, 'rendered.png'), ['1f77b4', '2ca02c', 'ff7f0e', 'd62728', '7f7f7f'], LEGEND_LEFT);
    // Lines and points in the plotting area. Where two series' figures coincide the later one
    // covers the earlier, so only the total and the last drawn (the average) must show.
    expect(pixels.reduce((sum, n) => sum + n, 0)).toBeGreaterThan(150);
    expect(pixels.at(-1)).toBeGreaterThan(20);
  });

  it('sends data from a perf_analyzer JSON file, and zeros', async () => {
    const file = join(directory, 'data.json');
    await writeFile(file, JSON.stringify({ data: [{ INPUT0: [1] }, { INPUT0: { content: [2], shape: [1] } }] }));
    const run = await perf('-m', 'tiny', '-i', 'inprocess', '--model-repository', repository, '--input-data', file, ...QUICK);
    expect(run.code).toBe(0);
    // With --percentile, stability and the summary use that percentile.
    const zero = await perf('-m', 'tiny', '-i', 'inprocess', '--model-repository', repository, '--input-data', 'zero', '--percentile', '95', ...QUICK);
    expect(zero.code).toBe(0);
    expect(zero.out).toContain('Stabilizing using p95 latency');
    expect(zero.out).toMatch(/Inferences\/Second vs\. Client p95 Batch Latency\nConcurrency: 1, throughput: [\d.]+ infer\/sec, latency \d+ usec/);
    expect(zero.err).toMatch(/Pass \[1\] throughput: [\d.]+ infer\/sec\. p95 latency: \d+ usec/);
    await writeFile(file, JSON.stringify({ data: [{ INPUT0: [1, 2] }] }));
    const wrong = await perf('-m', 'tiny', '-i', 'inprocess', '--model-repository', repository, '--input-data', file, ...QUICK);
    expect(wrong.code).toBe(2);
    expect(wrong.err).toContain('entry 0: input INPUT0 has 2 elements, its shape [1] holds 1');
  });

  it('drives an open loop at the request rate asked', async () => {
    const csv = join(directory, 'rate.csv');
    const run = await perf('-m', 'tiny', '-i', 'inprocess', '--model-repository', repository, '--request-rate-range', '200', '-p', '300', '--max-trials', '3', '-s', '50', '-f', csv);
    expect(run.code).toBe(0);
    expect(run.out).toContain('Request Rate: 200 inference requests per seconds');
    const throughput = Number(run.out.match(/Request Rate: 200, throughput: ([\d.]+) infer\/sec/)![1]);
    expect(throughput).toBeGreaterThan(150);
    expect(throughput).toBeLessThan(250);
    expect((await readFile(csv, 'utf8')).split('\n')[0]).toBe(CSV_HEADER.replace('Concurrency', 'Request Rate'));
  });

  it('sends a sequence model its requests in sequences, closed and open loop', async () => {
    for (const load of [['--concurrency-range', '2'], ['--request-rate-range', '300', '--num-of-sequences', '3']]) {
      const run = await perf('-m', 'accumulator', '-i', 'inprocess', '--model-repository', repository, '--sequence-length', '5', ...load, ...QUICK);
      expect(run.err).not.toMatch(/tritium perf:/);
      expect(run.code).toBe(0);
      expect(Number(run.out.match(/Successful request count: (\d+)/)![1])).toBeGreaterThan(0);
    }
  });

  describe('over the network', () => {
    let server: InferenceServer;
    let http: RunningFrontend;
    let grpc: RunningFrontend;

    beforeAll(async () => {
      const quiet = () => {};
      server = await InferenceServer.start({ modelRepository: repository, logger: { error: quiet, warn: quiet, info: quiet, verbose: quiet } });
      http = await startHttpFrontend(server, { host: '127.0.0.1', port: 0, allowClientSharedMemory: true });
      grpc = await startGrpcFrontend(server, { host: '127.0.0.1', port: 0, allowClientSharedMemory: true });
    });

    afterAll(async () => {
      await Promise.all([http?.close(), grpc?.close()]);
      await server?.stop();
    });

    it.each([
      ['http', () => http.port, /Avg HTTP time: \d+ usec \(send\/recv \d+ usec \+ response wait \d+ usec\)/],
      ['grpc', () => grpc.port, /Avg gRPC time: \d+ usec \(\(un\)marshal request\/response \d+ usec \+ response wait \d+ usec\)/],
    ])('measures over %s', async (protocol, port, timeLine) => {
      const run = await perf('-m', 'tiny', '-i', protocol, '-u', `127.0.0.1:${port()}`, '--concurrency-range', '2', '-b', '3', ...QUICK);
      expect(run.err).toMatch(/Pass \[1\]/);
      expect(run.code).toBe(0);
      expect(run.out).toContain(`Service Kind: Triton (${protocol === 'http' ? 'HTTP' : 'gRPC'})`);
      expect(run.out).toMatch(timeLine);
      const requests = Number(run.out.match(/Successful request count: (\d+)/)![1]);
      expect(requests).toBeGreaterThan(0);
      expect(Number(run.out.match(/Inference count: (\d+)/)![1])).toBe(3 * requests);
      const sequences = await perf('-m', 'accumulator', '-i', protocol, '-u', `127.0.0.1:${port()}`, '--sequence-length', '3', ...QUICK);
      expect(sequences.err).not.toMatch(/tritium perf:/);
      expect(sequences.code).toBe(0);
      // The region is registered for the run, then unregistered and removed.
      const before = new Set(await readdir('/dev/shm'));
      const shm = await perf('-m', 'tiny', '-i', protocol, '-u', `127.0.0.1:${port()}`, '--shared-memory', 'system', '-b', '2', ...QUICK);
      expect(shm.err).not.toMatch(/tritium perf:/);
      expect(shm.code).toBe(0);
      expect(Number(shm.out.match(/Successful request count: (\d+)/)![1])).toBeGreaterThan(0);
      expect((await readdir('/dev/shm')).filter((f) => f.startsWith('tritium-perf-') && !before.has(f))).toEqual([]);
      const unknown = await perf('-m', 'nope', '-i', protocol, '-u', `127.0.0.1:${port()}`, ...QUICK);
      expect(unknown.code).toBe(1);
      expect(unknown.err).toMatch(/model 'nope'/);
    });
  });
});

describe('tritium perf on a decoupled model', () => {
  const grpc = useGrpcFixture();

  it('drives it over a gRPC stream with --streaming, and refuses it without', async () => {
    await grpc.start({ repeat: REPEAT });
    const url = `127.0.0.1:${grpc.frontend!.port}`;
    const refused = await perf('-m', 'repeat', '-i', 'grpc', '-u', url, ...QUICK);
    expect(refused.code).toBe(2);
    expect(refused.err).toContain("model 'repeat' is decoupled (zero or more responses per request): give --streaming");
    const run = await perf('-m', 'repeat', '-i', 'grpc', '-u', url, '--streaming', '--concurrency-range', '3', ...QUICK);
    expect(run.err).not.toMatch(/tritium perf:/);
    expect(run.code).toBe(0);
    expect(Number(run.out.match(/Successful request count: (\d+)/)![1])).toBeGreaterThan(0);
  });

  it('drives it in-process through inferStream()', async () => {
    const repo = await TempRepository.create({ repeat: REPEAT });
    const server = await InferenceServer.start({ modelRepository: repo.path, backends: [testBackend(newProbe())] });
    const client = new InProcessClient(server, true);
    try {
      const requests = [client.prepare('repeat', undefined, { IN: { datatype: 'INT32', shape: [1], data: Int32Array.of(7) } })];
      const result = await measureLevel(client, requests, 'concurrency', 2, { model: 'repeat', batchSize: 1, measurementIntervalMs: 100, stabilityPercentage: 50, maxTrials: 4 }, () => {});
      expect(result.requestCount).toBeGreaterThan(0);
      // The test backend waits 1 ms before its response: each request lasts until its stream ends.
      expect(result.percentilesUs.get(50)).toBeGreaterThan(900);
    } finally {
      await client.close();
      await repo.remove();
    }
  });
});

describe("tritium perf's HTTP requests", () => {
  it("write each datatype's data as Triton's JSON takes it: BOOL as true/false, 64-bit integers exact, BYTES as strings", () => {
    const { body } = new HttpPerfClient('127.0.0.1:8000').prepare('m', undefined, {
      FLAG: { datatype: 'BOOL', shape: [2], data: new Uint8Array([1, 0]) },
      BIG: { datatype: 'INT64', shape: [2], data: new BigInt64Array([9007199254740993n, -2n]) },
      TEXT: { datatype: 'BYTES', shape: [1], data: [Buffer.from('hi "you"')] },
      HALF: { datatype: 'FP16', shape: [1], data: new Uint16Array([0x3c00]) },
    });
    expect(body.toString()).toBe(
      '{"inputs":[{"name":"FLAG","datatype":"BOOL","shape":[2],"data":[true,false]},{"name":"BIG","datatype":"INT64","shape":[2],"data":[9007199254740993,-2]},' +
        '{"name":"TEXT","datatype":"BYTES","shape":[1],"data":["hi \\"you\\""]},{"name":"HALF","datatype":"FP16","shape":[1],"data":[1]}]}',
    );
  });
});
