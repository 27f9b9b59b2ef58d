import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
// Why Python models cannot run here (no python3 with numpy, or the shared-memory addon unbuilt), printed once there.
import { pythonMissing } from '../packages/backend-python/test/helpers.js';
// Why tiny GGUF models cannot be written here (python3 with the gguf package), for the llama.cpp example.
import { tinyGgufUnavailable } from '../packages/backend-llamacpp/models/tiny-llama.js';

const ggufUnavailable = await tinyGgufUnavailable();
if (ggufUnavailable) console.log(`skipping the openai-chat example: ${ggufUnavailable}`);

const root = fileURLToPath(new URL('..', import.meta.url));
const run = (script: string) =>
  promisify(execFile)(process.execPath, ['--import', 'tsx', script], { cwd: root, timeout: 60_000 });

// The examples are what the README's first command runs: they must keep working.
describe('examples', () => {
  it('quickstart serves ONNX models from a repository it creates, loading the ONNX backend by name', async () => {
    const { stdout } = await run('examples/quickstart/main.ts');
    expect(stdout).toMatch(/add_sub v1: READY \(onnxruntime-node/);
    expect(stdout).toMatch(/echo_text v1: READY/);
    expect(stdout).toContain('INPUT0 + INPUT1 = 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16');
    expect(stdout).toContain('INPUT0 - INPUT1 = -1 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14');
    expect(stdout).toContain('["hello","tritium"]');
    expect(stdout).toMatch(/INVALID_ARG: model 'add_sub': input 'INPUT0' has shape \[1,4\]/);
    expect(stdout).toMatch(/'mlp v1'\s*│\s*1280\s*│\s*20\s*│/);
  });

  it('network-server answers Triton clients over HTTP (JSON and binary), gRPC and the metrics port', async () => {
    const { stdout } = await run('examples/network-server/main.ts');
    expect(stdout).toContain('ready: 200');
    expect(stdout).toContain('HTTP JSON:   OUTPUT0 = 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16');
    expect(stdout).toContain('HTTP binary: OUTPUT1 = -1 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14');
    expect(stdout).toContain('gRPC:        OUTPUT0 = 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16');
    expect(stdout).toContain('metrics:     nv_inference_request_success{model="add_sub",version="1"} 3');
  });

  it('custom-backend serves a model with a backend written in TypeScript', async () => {
    const { stdout } = await run('examples/custom-backend/main.ts');
    expect(stdout).toContain('softmax v1 -> shape [2,4]: 0.002 0.016 0.117 0.865 0.000 0.000 0.000 1.000');
    expect(stdout).toMatch(/a wrong shape is refused: INVALID_ARG/);
    expect(stdout).toContain('statistics: 2 inferences in 1 executions, success 1');
  });

  it('dynamic-batching serves the MLP with and without a dynamic batcher to 64 concurrent callers', async () => {
    const { stdout } = await run('examples/dynamic-batching/main.ts');
    expect(stdout).toContain('mlp_plain: READY, max_batch_size 64, default scheduler (no dynamic_batching)');
    expect(stdout).toContain('mlp_batched: READY, max_batch_size 64, dynamic_batching (max_queue_delay_microseconds 500)');
    const line = (model: string) => {
      const match = new RegExp(
        `${model}\\s*: (\\d+) requests, \\d+ req/s, p50 [\\d.]+ ms, p99 [\\d.]+ ms, mean batch size ([\\d.]+) \\((\\d+) inferences in (\\d+) executions\\), all (\\d+) outputs FP32 \\[1,256\\] each equal to its row's lone answer`,
      ).exec(stdout);
      expect(match, `${model}'s line in:\n${stdout}`).not.toBeNull();
      const [, requests, meanBatch, inferences, executions, checked] = match!;
      expect(Number(requests)).toBeGreaterThan(0);
      expect(checked).toBe(requests);
      expect(inferences).toBe(requests);
      return { meanBatch: Number(meanBatch), executions: Number(executions), inferences: Number(inferences) };
    };
    const plain = line('mlp_plain');
    expect(plain.meanBatch).toBe(1);
    expect(plain.executions).toBe(plain.inferences);
    const batched = line('mlp_batched');
    expect(batched.meanBatch).toBeGreaterThan(1);
    expect(batched.executions).toBeLessThan(batched.inferences);
    expect(stdout).toMatch(/speed-up with dynamic batching: [\d.]+x requests\/s/);
  });

  it('sequence keeps a running sum per sequence in implicit state, for numeric, bigint and string ids', async () => {
    const { stdout } = await run('examples/sequence/main.ts');
    expect(stdout).toMatch(/accumulator v1: READY/);
    expect(stdout).toContain("round 2: 1: +2 = 3; 18446744073709551615n: +20 = 30; 'session-a': +1.5 = 2");
    expect(stdout).toContain('sequence 1: 1 3 6 10');
    expect(stdout).toContain('sequence 18446744073709551615n: 10 30 60');
    expect(stdout).toContain("sequence 'session-a': 0.5 2 4 8 16");
    expect(stdout).toMatch(/A sequence that was never started: INVALID_ARG: model 'accumulator' version 1 request '\d+': sequence with correlation id 99 is not started/);
    expect(stdout).toMatch(/Statistics: accumulator v1: 12 inferences in \d+ executions, success 12, fail 1/);
    expect(stdout).toMatch(/server stopped in \d+ ms/);
  });

  it.skipIf(pythonMissing)('python-model serves a Triton Python classifier, loading the Python backend by name, batching the callers', async () => {
    const { stdout } = await run('examples/python-model/main.ts');
    expect(stdout).toContain('classifier v1: READY');
    expect(stdout).toMatch(/positive \[0\.00 0\.01 0\.99\]  I love it, works great/);
    expect(stdout).toMatch(/negative \[1\.00 0\.00 0\.00\]  Terrible\. Broken on arrival, the worst/);
    const [, inferences, executions] = /statistics: (\d+) inferences in (\d+) executions/.exec(stdout)!;
    expect(Number(inferences)).toBe(12);
    expect(Number(executions)).toBeLessThan(12);
  });

  it.skipIf(pythonMissing)('python-bls runs a Python pipeline that calls two other models through the server', async () => {
    const { stdout } = await run('examples/python-bls/main.ts');
    expect(stdout).toMatch(/score 0\.5\d+ relevant: To reset your password/);
    expect(stdout).toMatch(/score 0\.000 not relevant: Our office/);
    expect(stdout).toContain('embed: 4 inferences');
  });

  it.skipIf(pythonMissing)('ensemble serves preprocess (Python) -> scorer (ONNX) -> postprocess (Python) as one model', async () => {
    const { stdout } = await run('examples/ensemble/main.ts');
    expect(stdout).toContain('pipeline v1: READY');
    expect(stdout).toMatch(/caller 0: class_\d+, class_\d+, class_\d+ \(scores [\d.]+, [\d.]+, [\d.]+\)/);
    expect(stdout).toContain('8 of 8 answers equal the three models called one after another');
    expect(stdout).toContain('pipeline: 8 requests, 0 executions');
  });

  it.skipIf(ggufUnavailable)('openai-chat streams a chat completion with the openai npm client from a llama.cpp model in-process', async () => {
    const { stdout } = await run('examples/openai-chat/main.ts');
    expect(stdout).toContain('models: tiny');
    const [, chunks, completionTokens] = /streamed (\d+) chunks, finish_reason (?:length|stop), usage: \d+ prompt \+ (\d+) completion tokens/.exec(stdout)!;
    expect(Number(chunks)).toBeGreaterThan(1);
    expect(Number(completionTokens)).toBeLessThanOrEqual(16);
  });
});
