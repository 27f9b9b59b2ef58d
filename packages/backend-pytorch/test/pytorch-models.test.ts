import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferenceServer, fromBf16, fromFp16, toBf16, toFp16 } from '@tritium/core';
import type { InferenceError } from '@tritium/core';
import { pytorchBackend } from '@tritium/backend-pytorch';
import { loadTorchAddon } from '../src/native.js';
import { makeRepository, torchMissing } from './helpers.js';
import type { Repository } from './helpers.js';

const SERVED = ['add_sub', 'named_args', 'indexed', 'linear', 'casts', 'slow', 'strings', 'some_outputs', 'sequence', 'batch_count', 'dict_input', 'in_place'];
const IDENTITIES = ['BOOL', 'UINT8', 'INT8', 'INT16', 'INT32', 'INT64', 'FP16', 'BF16', 'FP64'] as const;

describe.skipIf(torchMissing)('TorchScript models in a Triton repository', () => {
  let repository: Repository;
  let server: InferenceServer;

  beforeAll(async () => {
    repository = await makeRepository();
    server = await InferenceServer.start({
      modelRepository: repository.path,
      modelControlMode: 'explicit',
      backends: [pytorchBackend()],
    });
    for (const name of [...SERVED, ...IDENTITIES.map((t) => `identity_${t.toLowerCase()}`)]) await server.loadModel(name);
  });

  afterAll(async () => {
    await server?.stop();
    await repository?.remove();
  });

  it('answers INPUT__n / OUTPUT__n models, and batches concurrent requests under the dynamic batcher', async () => {
    const requests = Array.from({ length: 6 }, (_, i) =>
      server.infer('add_sub', {
        inputs: {
          INPUT__0: { datatype: 'FP32', shape: [1, 4], data: new Float32Array([i, 1, 2, 3]) },
          INPUT__1: { datatype: 'FP32', shape: [1, 4], data: new Float32Array([1, 1, 1, i]) },
        },
      }),
    );
    const responses = await Promise.all(requests);
    responses.forEach((response, i) => {
      expect(response.outputs.OUTPUT__0!.shape).toEqual([1, 4]);
      expect([...(response.outputs.OUTPUT__0!.data as Float32Array)]).toEqual([i + 1, 2, 3, 3 + i]);
      expect([...(response.outputs.OUTPUT__1!.data as Float32Array)]).toEqual([i - 1, 0, 1, 3 - i]);
    });
    const [stats] = (await server.statistics('add_sub')).model_stats;
    expect(stats!.inference_count).toBe(6);
    // The 200 ms queue delay gathers the six into fewer runs.
    expect(stats!.execution_count).toBeLessThan(6);
    // forward() is compute_infer; gathering the inputs before it and reading its outputs after are compute_input and compute_output.
    const { compute_input, compute_infer, compute_output } = stats!.inference_stats;
    expect([compute_input.ns, compute_infer.ns, compute_output.ns].every((ns) => ns > 0)).toBe(true);
  });

  it("matches inputs to forward()'s argument names whatever the config's order", async () => {
    const { outputs } = await server.infer('named_args', {
      inputs: {
        x: { datatype: 'FP32', shape: [3], data: new Float32Array([10, 20, 30]) },
        y: { datatype: 'FP32', shape: [3], data: new Float32Array([1, 2, 3]) },
      },
    });
    expect([...(outputs.difference!.data as Float32Array)]).toEqual([8, 16, 24]);
  });

  it('places other names by their __<index>, for inputs and outputs', async () => {
    const { outputs } = await server.infer('indexed', {
      inputs: {
        first__0: { datatype: 'INT32', shape: [2], data: new Int32Array([1, 2]) },
        second__1: { datatype: 'INT32', shape: [2], data: new Int32Array([3, 4]) },
      },
    });
    expect([...(outputs.mixed__0!.data as Int32Array)]).toEqual([13, 24]);
    expect([...(outputs.copy__1!.data as Int32Array)]).toEqual([1, 2]);
  });

  it("gives torch's own results for a linear layer (inference mode and optimized execution off)", async () => {
    const { input, output } = repository.expected.linear!;
    const { outputs } = await server.infer('linear', { inputs: { INPUT__0: { datatype: 'FP32', shape: [2, 5], data: new Float32Array(input!) } } });
    expect(outputs.OUTPUT__0!.shape).toEqual([2, 3]);
    [...(outputs.OUTPUT__0!.data as Float32Array)].forEach((value, i) => expect(value).toBeCloseTo(output![i]!, 6));
  });

  it("gives torch's own results in FP16, BF16, INT64, BOOL, FP64 and INT8", async () => {
    const expected = repository.expected.casts!;
    const { outputs } = await server.infer('casts', { inputs: { INPUT__0: { datatype: 'FP32', shape: [5], data: new Float32Array(expected.input!) } } });
    expect(outputs.OUTPUT__0!.datatype).toBe('FP16');
    expect([...(outputs.OUTPUT__0!.data as Uint16Array)]).toEqual(expected.OUTPUT__0);
    expect([...(outputs.OUTPUT__1!.data as Uint16Array)]).toEqual(expected.OUTPUT__1);
    expect([...(outputs.OUTPUT__2!.data as BigInt64Array)].map(Number)).toEqual(expected.OUTPUT__2);
    expect([...(outputs.OUTPUT__3!.data as Uint8Array)]).toEqual(expected.OUTPUT__3);
    expect([...(outputs.OUTPUT__4!.data as Float64Array)]).toEqual(expected.OUTPUT__4);
    expect([...(outputs.OUTPUT__5!.data as Int8Array)]).toEqual(expected.OUTPUT__5);
  });

  it.each(IDENTITIES)('carries %s through forward() unchanged', async (datatype) => {
    const values: Record<(typeof IDENTITIES)[number], ArrayBufferView> = {
      BOOL: new Uint8Array([1, 0, 1]),
      UINT8: new Uint8Array([0, 128, 255]),
      INT8: new Int8Array([-128, 0, 127]),
      INT16: new Int16Array([-32768, 1, 32767]),
      INT32: new Int32Array([-(2 ** 31), 5, 2 ** 31 - 1]),
      INT64: new BigInt64Array([-(2n ** 63n), 7n, 2n ** 63n - 1n]),
      FP16: toFp16([0.5, -2, 65504]),
      BF16: toBf16([0.5, -2, 3.0e38]),
      FP64: new Float64Array([Math.PI, -1e300, 0]),
    };
    const data = values[datatype];
    const { outputs } = await server.infer(`identity_${datatype.toLowerCase()}`, {
      inputs: { INPUT__0: { datatype, shape: [1, 3], data: data as never } },
    });
    expect(outputs.OUTPUT__0!.datatype).toBe(datatype);
    expect(outputs.OUTPUT__0!.shape).toEqual([1, 3]);
    expect(outputs.OUTPUT__0!.data).toEqual(data);
    if (datatype === 'FP16') expect(fromFp16(outputs.OUTPUT__0!.data as Uint16Array)).toEqual(new Float32Array([0.5, -2, 65504]));
    if (datatype === 'BF16') expect(fromBf16(outputs.OUTPUT__0!.data as Uint16Array)[1]).toBe(-2);
  });

  it("passes BYTES to forward() as List[str] and answers a returned List[str] as BYTES, as torch does", async () => {
    const { input, output } = repository.expected.strings! as unknown as Record<string, string[]>;
    const { outputs } = await server.infer('strings', {
      inputs: {
        INPUT__0: { datatype: 'BYTES', shape: [2, 2], data: input! },
        INPUT__1: { datatype: 'INT32', shape: [2, 1], data: new Int32Array([1, 2]) },
      },
    });
    expect(outputs.OUTPUT__0!.shape).toEqual([2, 2]);
    expect((outputs.OUTPUT__0!.data as Uint8Array[]).map((bytes) => Buffer.from(bytes).toString('utf8'))).toEqual(output);
    expect([...(outputs.OUTPUT__1!.data as Int32Array)]).toEqual([4, 8]);
    // Bytes that are not UTF-8 cross unchanged.
    const binary = await server.infer('strings', {
      inputs: {
        INPUT__0: { datatype: 'BYTES', shape: [1, 2], data: [new Uint8Array([0xff, 0]), 'a'] },
        INPUT__1: { datatype: 'INT32', shape: [1, 1], data: new Int32Array([1]) },
      },
    });
    expect([...(binary.outputs.OUTPUT__0!.data as Uint8Array[])[0]!]).toEqual([0xff, 0, 0x21]);
  });

  it("feeds a sequence's START control to forward() by its __<index>, as the sequence batcher fills it", async () => {
    const step = (value: number, start: boolean) =>
      server.infer('sequence', { inputs: { INPUT__0: { datatype: 'INT32', shape: [1, 1], data: new Int32Array([value]) } }, sequence: { id: 7, start, end: !start } });
    expect([...((await step(5, true)).outputs.OUTPUT__0!.data as Int32Array)]).toEqual([105]);
    expect([...((await step(6, false)).outputs.OUTPUT__0!.data as Int32Array)]).toEqual([6]);
  });

  it("feeds a batch input (BATCH_ELEMENT_COUNT) to forward() after the config's inputs", async () => {
    const { outputs } = await server.infer('batch_count', { inputs: { INPUT__0: { datatype: 'INT32', shape: [2, 3], data: new Int32Array(6) } } });
    expect([...(outputs.OUTPUT__0!.data as Int32Array)]).toEqual([6, 6, 6, 6, 6, 6]);
  });

  it('passes the inputs by name to a forward() that takes one Dict[str, Tensor]', async () => {
    const { outputs } = await server.infer('dict_input', {
      inputs: { minuend: { datatype: 'FP32', shape: [2], data: new Float32Array([5, 7]) }, subtrahend: { datatype: 'FP32', shape: [2], data: new Float32Array([1, 2]) } },
    });
    expect([...(outputs.OUTPUT__0!.data as Float32Array)]).toEqual([4, 5]);
  });

  it("leaves the caller's array alone when the model writes into its input", async () => {
    const data = new Float32Array([1, 2]);
    const { outputs } = await server.infer('in_place', { inputs: { INPUT__0: { datatype: 'FP32', shape: [2], data } } });
    expect([...(outputs.OUTPUT__0!.data as Float32Array)]).toEqual([100, 200]);
    expect([...data]).toEqual([1, 2]);
  });

  it('refuses at load a forward() argument that is not a tensor, and implicit sequence state, saying so', async () => {
    const scalar = (await server.loadModel('scalar_argument').catch((e: unknown) => e)) as InferenceError;
    expect(scalar).toMatchObject({ code: 'INVALID_ARG', message: expect.stringMatching(/forward\(\) argument 'k' is int; the backend passes Tensor and List\[str\] arguments, or one Dict\[str, Tensor\]/) });
    const config = await server.modelConfig('sequence');
    const state = { input_name: 'STATE__2', output_name: 'STATE__1', data_type: 'TYPE_INT32' as const, dims: [1] };
    const stateful = { ...config, sequence_batching: { ...config.sequence_batching!, state: [state] } };
    const refused = (await server.loadModel('sequence', { config: stateful }).catch((e: unknown) => e)) as InferenceError;
    // Triton's words for a version that fails to load; the backend's own code stays in `cause`.
    expect(refused).toMatchObject({ code: 'INVALID_ARG', message: expect.stringMatching(/^load failed for model 'sequence': version 1 is at UNAVAILABLE state: .*implicit state\) is not supported/), cause: { code: 'UNSUPPORTED' } });
    expect(await server.isModelReady('sequence')).toBe(true);
  });

  it('runs forward() off the event loop: timers fire while a long run is under way', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const started = performance.now();
    try {
      await server.infer('slow', { inputs: { ROUNDS__0: { datatype: 'INT64', shape: [1], data: new BigInt64Array([400n]) } } });
    } finally {
      clearInterval(timer);
    }
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThan(50);
    // A blocked loop would tick at most once; a free one ticks about every 5 ms (wide margin for a busy machine).
    expect(ticks).toBeGreaterThan(Math.min(5, elapsed / 50));
  });

  it('refuses a wrong datatype or shape, and keeps serving', async () => {
    const wrongType = server.infer('linear', { inputs: { INPUT__0: { datatype: 'FP64', shape: [1, 5], data: new Float64Array(5) } } });
    await expect(wrongType).rejects.toMatchObject({ code: 'INVALID_ARG' });
    const wrongShape = server.infer('linear', { inputs: { INPUT__0: { datatype: 'FP32', shape: [1, 4], data: new Float32Array(4) } } });
    await expect(wrongShape).rejects.toMatchObject({ code: 'INVALID_ARG' });
    const { outputs } = await server.infer('linear', { inputs: { INPUT__0: { datatype: 'FP32', shape: [1, 5], data: new Float32Array(5) } } });
    expect(outputs.OUTPUT__0!.shape).toEqual([1, 3]);
  });

  it('answers a config listing only some of the tensors forward() returns, each by its __<index>', async () => {
    const { outputs } = await server.infer('some_outputs', { inputs: { INPUT__0: { datatype: 'FP32', shape: [2], data: new Float32Array([10, 20]) } } });
    expect([...(outputs.OUTPUT__2!.data as Float32Array)]).toEqual([13, 23]);
    expect([...(outputs.OUTPUT__0!.data as Float32Array)]).toEqual([11, 21]);
  });

  it('fails to load TorchScript without forward(), saying so, and keeps serving', async () => {
    const error = (await server.loadModel('no_forward').catch((e: unknown) => e)) as InferenceError;
    expect(error.message).toMatch(/model 'no_forward'.*no forward\(\) method/);
    const { outputs } = await server.infer('some_outputs', { inputs: { INPUT__0: { datatype: 'FP32', shape: [2], data: new Float32Array([0, 0]) } } });
    expect([...(outputs.OUTPUT__0!.data as Float32Array)]).toEqual([1, 1]);
  });

  it('fails to load a model.pt that is not TorchScript, saying so', async () => {
    const error = (await server.loadModel('corrupt').catch((e: unknown) => e)) as InferenceError;
    expect(error.message).toMatch(/model 'corrupt': libtorch cannot load .*model\.pt as TorchScript/);
    expect(await server.isModelReady('linear')).toBe(true);
  });

  // The same test on both kinds of machine: with a CUDA libtorch and a GPU the instance runs there and answers as on the CPU; without, the load says why.
  it('runs KIND_GPU instances on CUDA where libtorch has it and a GPU is present, and fails the load (UNAVAILABLE beneath) saying why where not', async () => {
    const config = await server.modelConfig('linear');
    const input = { INPUT__0: { datatype: 'FP32' as const, shape: [2, 5], data: Float32Array.from({ length: 10 }, (_, i) => i / 10) } };
    const onCpu = await server.infer('linear', { inputs: input });
    const loading = server.loadModel('linear', { config: { ...config, instance_group: [{ kind: 'KIND_GPU', count: 1 }] } });
    if (loadTorchAddon().cudaDeviceCount() > 0) {
      await loading;
      const onGpu = await server.infer('linear', { inputs: input });
      [...(onGpu.outputs.OUTPUT__0!.data as Float32Array)].forEach((value, i) => expect(value).toBeCloseTo((onCpu.outputs.OUTPUT__0!.data as Float32Array)[i]!, 4));
    } else {
      const error = (await loading.catch((e: unknown) => e)) as InferenceError;
      expect(error).toMatchObject({ code: 'INVALID_ARG', message: expect.stringMatching(/^load failed for model 'linear': .*KIND_GPU needs CUDA, and the libtorch the addon was built against \(torch .*\) has no CUDA or no GPU is present/), cause: { code: 'UNAVAILABLE' } });
      expect(await server.isModelReady('linear')).toBe(true);
    }
    await server.loadModel('linear', { config });
  });

  it.each(['TYPE_UINT16', 'TYPE_UINT32'])('refuses a %s tensor at load (UNSUPPORTED beneath Triton\'s load failure), naming it', async (dataType) => {
    const config = await server.modelConfig('linear');
    const changed = { ...config, name: 'linear', output: [{ ...config.output[0]!, data_type: dataType }] };
    const error = (await server.loadModel('linear', { config: changed as never }).catch((e: unknown) => e)) as InferenceError;
    expect(error).toMatchObject({ code: 'INVALID_ARG', message: expect.stringMatching(/^load failed for model 'linear': /), cause: { code: 'UNSUPPORTED' } });
    expect(error.message).toContain(`tensor 'OUTPUT__0' is ${dataType}, which @tritium/backend-pytorch does not serve`);
    await server.loadModel('linear');
  });

  it('refuses a config whose inputs do not match forward(), and fails a request whose output is not what the config says', async () => {
    const config = await server.modelConfig('linear');
    const extraInput = { ...config, input: [...config.input, { ...config.input[0]!, name: 'INPUT__1' }] };
    const refused = (await server.loadModel('linear', { config: extraInput }).catch((e: unknown) => e)) as InferenceError;
    expect(refused.message).toMatch(/model 'linear': the configuration feeds forward\(\) 2 tensors but it takes 1 \(input\)/);
    await server.loadModel('linear', { config: { ...config, output: [{ ...config.output[0]!, data_type: 'TYPE_FP64' }] } });
    const failed = server.infer('linear', { inputs: { INPUT__0: { datatype: 'FP32', shape: [1, 5], data: new Float32Array(5) } } });
    await expect(failed).rejects.toMatchObject({ code: 'INTERNAL', message: expect.stringMatching(/output 'OUTPUT__0': forward\(\) returned FP32, the configuration says FP64/) });
    await server.loadModel('linear', { config });
  });

  it("fails a request with libtorch's own reason when forward() raises, and keeps serving", async () => {
    const config = await server.modelConfig('indexed');
    const variable = { ...config, input: config.input.map((input) => ({ ...input, dims: [-1] })), output: config.output.map((output) => ({ ...output, dims: [-1] })) };
    await server.loadModel('indexed', { config: variable });
    const mismatched = server.infer('indexed', {
      inputs: { first__0: { datatype: 'INT32', shape: [2], data: new Int32Array(2) }, second__1: { datatype: 'INT32', shape: [3], data: new Int32Array(3) } },
    });
    await expect(mismatched).rejects.toMatchObject({ code: 'INTERNAL', message: expect.stringMatching(/model 'indexed'.*size of tensor a \(2\) must match the size of tensor b \(3\)/s) });
    const { outputs } = await server.infer('indexed', {
      inputs: { first__0: { datatype: 'INT32', shape: [1], data: new Int32Array([1]) }, second__1: { datatype: 'INT32', shape: [1], data: new Int32Array([2]) } },
    });
    expect([...(outputs.mixed__0!.data as Int32Array)]).toEqual([12]);
  });

  it('loads and unloads without growing threads or memory', async () => {
    const cycle = async () => {
      await server.loadModel('linear');
      await server.infer('linear', { inputs: { INPUT__0: { datatype: 'FP32', shape: [4, 5], data: new Float32Array(20) } } });
      await server.unloadModel('linear');
    };
    for (let i = 0; i < 3; i++) await cycle();
    const threads = readdirSync('/proc/self/task').length;
    const rss = process.memoryUsage().rss;
    for (let i = 0; i < 20; i++) await cycle();
    expect(readdirSync('/proc/self/task').length).toBeLessThanOrEqual(threads);
    // 20 loads of the model would hold far more than this if modules leaked (each load maps the archive and its graph).
    expect(process.memoryUsage().rss - rss).toBeLessThan(40 * 1024 * 1024);
    await server.loadModel('linear');
  });
});
