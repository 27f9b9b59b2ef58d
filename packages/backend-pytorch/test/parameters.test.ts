import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferenceServer } from '@tritium/core';
import type { InferenceError, Logger } from '@tritium/core';
import { pytorchBackend } from '@tritium/backend-pytorch';
import { captureWarnings } from '../../core/test/helpers/warnings.js';
import { loadTorchAddon } from '../src/native.js';
import { makeRepository, torchMissing } from './helpers.js';
import type { Repository } from './helpers.js';

// Its own file, so its own process: the thread counts are libtorch's, set once per process.
describe.skipIf(torchMissing)("Triton's pytorch parameters", () => {
  let repository: Repository;
  let server: InferenceServer;
  const logger: Logger = { error() {}, warn() {}, info() {}, verbose() {} };

  beforeAll(async () => {
    repository = await makeRepository();
    server = await InferenceServer.start({ modelRepository: repository.path, modelControlMode: 'explicit', backends: [pytorchBackend()], logger });
  });

  afterAll(async () => {
    await server?.stop();
    await repository?.remove();
  });

  const withParameters = async (name: string, parameters: Record<string, string>) => {
    if (!(await server.isModelReady(name))) await server.loadModel(name);
    const base = await server.modelConfig(name);
    const entries = Object.fromEntries(Object.entries(parameters).map(([key, value]) => [key, { string_value: value }]));
    return server.loadModel(name, { config: { ...base, parameters: { ...base.parameters, ...entries } } });
  };

  it('ENABLE_WEIGHT_SHARING: the instances share one module (its call count)', async () => {
    await server.loadModel('counter');
    const counts: number[] = [];
    for (let i = 0; i < 4; i++) {
      const { outputs } = await server.infer('counter', { inputs: { INPUT__0: { datatype: 'INT64', shape: [1], data: new BigInt64Array(1) } } });
      counts.push(Number((outputs.OUTPUT__0!.data as BigInt64Array)[0]));
    }
    expect(counts).toEqual([1, 2, 3, 4]);
  });

  it("INTRA_OP_THREAD_COUNT: the first model's value stays for the process, a later one is warned of", async () => {
    const warnings = captureWarnings();
    expect(loadTorchAddon().threads().intra).toBe(1);
    await withParameters('linear', { INTRA_OP_THREAD_COUNT: '2' });
    expect(loadTorchAddon().threads().intra).toBe(1);
    expect(warnings).toContainEqual({ code: 'TRITIUM_W015', message: expect.stringMatching(/model 'linear': INTRA_OP_THREAD_COUNT is set once per process; the first model's 1 stays/) });
  });

  it('execution_thread: inline runs forward() on the calling thread, settled before the event loop turns, with the same results; another value is refused', async () => {
    const request = { inputs: { x: { datatype: 'FP32' as const, shape: [3], data: new Float32Array([10, 20, 30]) }, y: { datatype: 'FP32' as const, shape: [3], data: new Float32Array([1, 2, 3]) } } };
    /** The answer, and whether it came within the current turn of the loop (microtasks only). */
    const answer = async () => {
      let settled = false;
      const answered = server.infer('named_args', request).then((response) => ((settled = true), response));
      for (let i = 0; i < 50; i++) await Promise.resolve();
      const withinTurn = settled;
      return { withinTurn, difference: Array.from((await answered).outputs.difference!.data as Float32Array) };
    };
    await server.loadModel('named_args');
    // On the instance's thread, the answer needs the loop to turn and hear it.
    expect(await answer()).toEqual({ withinTurn: false, difference: [8, 16, 24] });
    await withParameters('named_args', { execution_thread: 'inline' });
    expect(await answer()).toEqual({ withinTurn: true, difference: [8, 16, 24] });
    const error = (await withParameters('named_args', { execution_thread: 'sideways' }).catch((e: unknown) => e)) as InferenceError;
    expect(error.message).toMatch(/parameter 'execution_thread' is 'sideways'.*"worker" .* or "inline"/);
  });

  it('refuses a parameter that is not a boolean or a count, naming it; a count of 0 or below is ignored, as in Triton', async () => {
    await withParameters('add_sub', { INTRA_OP_THREAD_COUNT: '-3' });
    expect(await server.isModelReady('add_sub')).toBe(true);
    for (const [key, value] of [
      ['INFERENCE_MODE', 'maybe'],
      ['INTER_OP_THREAD_COUNT', 'two'],
    ] as const) {
      const error = (await withParameters('add_sub', { [key]: value }).catch((e: unknown) => e)) as InferenceError;
      expect(error.message).toContain(`parameter '${key}' is '${value}'`);
    }
  });
});
