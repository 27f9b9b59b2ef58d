import { execFileSync } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bytesElementToString, InferenceServer, ServerLogger, type Tensor } from '@tritium/core';
import { pythonBackend } from '@tritium/backend-python';
import { pythonMissing, recordingLogger, usePythonServer } from './helpers.js';

const fp32 = (...values: number[]): Tensor => ({ datatype: 'FP32', shape: [values.length], data: new Float32Array(values) });
const text = (tensor: Tensor | undefined) => bytesElementToString((tensor!.data as Uint8Array[])[0]!);

describe.skipIf(pythonMissing)('Python models, as Triton runs them', () => {
  const python = usePythonServer();

  it('serves add_sub', async () => {
    const server = await python.start(['add_sub']);
    const response = await server.infer('add_sub', { inputs: { INPUT0: fp32(1, 2, 3, 4), INPUT1: fp32(10, 20, 30, 40) } });
    expect(Array.from(response.outputs.OUTPUT0!.data as Float32Array)).toEqual([11, 22, 33, 44]);
    expect(Array.from(response.outputs.OUTPUT1!.data as Float32Array)).toEqual([-9, -18, -27, -36]);
  });

  it("passes initialize() Triton's args, every value a string", async () => {
    const server = await python.start(['args']);
    const response = await server.infer('args', { inputs: { DUMMY: { datatype: 'INT32', shape: [1], data: new Int32Array([0]) } } });
    const args = JSON.parse(text(response.outputs.ARGS)) as Record<string, unknown>;
    expect(Object.values(args).every((value) => typeof value === 'string')).toBe(true);
    expect(args).toMatchObject({
      model_name: 'args',
      model_version: '1',
      model_instance_kind: 'CPU',
      model_instance_device_id: '0',
      model_repository: join(python.state.repo!, 'args'),
    });
    expect(args.model_instance_name).toMatch(/^args_0_[01]$/);
    const config = JSON.parse(args.model_config as string);
    expect(config).toMatchObject({ name: 'args', backend: 'python', max_batch_size: 0, input: [{ name: 'DUMMY', data_type: 'TYPE_INT32', dims: [1] }] });
  });

  it('passes every datatype through, BYTES as object arrays and FP16 as float16', async () => {
    const server = await python.start(['identity']);
    const inputs: Record<string, Tensor> = {
      INPUT_BOOL: { datatype: 'BOOL', shape: [3], data: new Uint8Array([1, 0, 1]) },
      INPUT_UINT8: { datatype: 'UINT8', shape: [2], data: new Uint8Array([0, 255]) },
      INPUT_UINT16: { datatype: 'UINT16', shape: [2], data: new Uint16Array([1, 65535]) },
      INPUT_UINT32: { datatype: 'UINT32', shape: [2], data: new Uint32Array([1, 4294967295]) },
      INPUT_UINT64: { datatype: 'UINT64', shape: [2], data: new BigUint64Array([1n, 2n ** 64n - 1n]) },
      INPUT_INT8: { datatype: 'INT8', shape: [2], data: new Int8Array([-128, 127]) },
      INPUT_INT16: { datatype: 'INT16', shape: [2], data: new Int16Array([-32768, 32767]) },
      INPUT_INT32: { datatype: 'INT32', shape: [2], data: new Int32Array([-(2 ** 31), 2 ** 31 - 1]) },
      INPUT_INT64: { datatype: 'INT64', shape: [2], data: new BigInt64Array([-(2n ** 63n), 2n ** 63n - 1n]) },
      INPUT_FP16: { datatype: 'FP16', shape: [2], data: new Uint16Array([0x3c00, 0xc000]) },
      INPUT_FP32: { datatype: 'FP32', shape: [2], data: new Float32Array([1.5, -2.25]) },
      INPUT_FP64: { datatype: 'FP64', shape: [2], data: new Float64Array([Math.PI, -1e300]) },
      INPUT_BYTES: { datatype: 'BYTES', shape: [3], data: ['héllo', '', new Uint8Array([0, 255, 10])] },
    };
    const response = await server.infer('identity', { inputs });
    for (const [name, tensor] of Object.entries(inputs)) {
      const output = response.outputs[name.replace('INPUT', 'OUTPUT')]!;
      expect(output.datatype, name).toBe(tensor.datatype);
      expect(output.shape, name).toEqual(tensor.shape);
      if (tensor.datatype === 'BYTES') {
        expect((output.data as Uint8Array[]).map((e) => Array.from(e))).toEqual([
          Array.from(Buffer.from('héllo')),
          [],
          [0, 255, 10],
        ]);
      } else {
        expect(Array.from(output.data as ArrayLike<number>), name).toEqual(Array.from(tensor.data as ArrayLike<number>));
      }
    }
  });

  it('hands several requests to one execute() under dynamic batching, without concatenating them', async () => {
    const server = await python.start(['identity_fp32']);
    const responses = await Promise.all(
      // Alike in shape, as the dynamic batcher batches only requests of one shape.
      Array.from({ length: 8 }, (_, i) => server.infer('identity_fp32', { inputs: { INPUT0: { datatype: 'FP32', shape: [1, 3], data: new Float32Array(3).fill(i) } } })),
    );
    responses.forEach((response, i) => expect(Array.from(response.outputs.OUTPUT0!.data as Float32Array)).toEqual([i, i, i]));
    const perExecute = responses.map((response) => (response.outputs.BATCH_REQUESTS!.data as Int32Array)[0]!);
    expect(Math.max(...perExecute)).toBeGreaterThan(1);
  });

  it('completes a config with auto_complete_config() when there is no config.pbtxt', async () => {
    const server = await python.start(['auto_complete']);
    const config = await server.modelConfig('auto_complete');
    expect(config.max_batch_size).toBe(4);
    expect(config.dynamic_batching).toBeDefined();
    expect(config.input!.map((input) => input.name).sort()).toEqual(['INPUT0', 'INPUT1']);
    const response = await server.infer('auto_complete', { inputs: { INPUT0: { ...fp32(1, 2, 3, 4), shape: [1, 4] }, INPUT1: { ...fp32(1, 1, 1, 1), shape: [1, 4] } } });
    expect(Array.from(response.outputs.OUTPUT0!.data as Float32Array)).toEqual([2, 3, 4, 5]);
  });

  it("sends pb_utils.Logger lines into the server's logger at their levels, following a changed setting at once", async () => {
    const logger = recordingLogger();
    const server = await python.start(['logger'], { logger: new ServerLogger({ sink: logger, settings: { log_verbose_level: 1 } }) });
    await server.infer('logger', { inputs: { INPUT0: fp32(1) } });
    expect(logger.lines).toContain("INFO model 'logger': logger: imported");
    for (const level of ['INFO', 'WARNING', 'ERROR', 'VERBOSE']) {
      expect(logger.lines).toContain(`${level} model 'logger': logger: execute ${level.toLowerCase()}`);
    }
    // A VERBOSE line is a level 1 line, as in Triton; INFO off drops a model's INFO lines.
    server.updateLogSettings({ log_verbose_level: 0, log_info: false });
    logger.lines.length = 0;
    await server.infer('logger', { inputs: { INPUT0: fp32(1) } });
    expect(logger.lines).toEqual(["WARNING model 'logger': logger: execute warning", "ERROR model 'logger': logger: execute error"]);
  });

  it('drops outputs the request did not ask for, as Triton does', async () => {
    const server = await python.start(['extra_outputs']);
    const response = await server.infer('extra_outputs', { inputs: { INPUT0: fp32(1, 2) }, outputs: ['OUTPUT1'] });
    expect(Object.keys(response.outputs)).toEqual(['OUTPUT1']);
    expect(Array.from(response.outputs.OUTPUT1!.data as Float32Array)).toEqual([2, 4]);
  });

  it('moves a tensor larger than the shared-memory region, growing it', async () => {
    const server = await python.start(['identity_fp32']);
    const count = 20 * 1024 * 1024; // 80 MB
    const data = new Float32Array(count).map((_, i) => i % 1000);
    const response = await server.infer('identity_fp32', { inputs: { INPUT0: { datatype: 'FP32', shape: [1, count], data } } });
    const output = response.outputs.OUTPUT0!.data as Float32Array;
    expect(output.length).toBe(count);
    expect(output[count - 1]).toBe((count - 1) % 1000);
    expect(Buffer.from(output.buffer).equals(Buffer.from(data.buffer))).toBe(true);
  });

  it('loads and unloads models from inside a model in explicit mode (names as str or bytes), and refuses otherwise', async () => {
    const server = await python.start(['model_control', 'add_sub'], { modelControlMode: 'explicit', startupModels: ['model_control'] });
    const control = (op: string) =>
      server.infer('model_control', { inputs: { OP: { datatype: 'BYTES', shape: [1], data: [op] }, NAME: { datatype: 'BYTES', shape: [1], data: ['add_sub'] } } });
    const ready = (response: Awaited<ReturnType<typeof control>>) => (response.outputs.READY!.data as Uint8Array)[0];
    expect(ready(await control('ready'))).toBe(0);
    expect(ready(await control('load'))).toBe(1);
    expect(await server.isModelReady('add_sub')).toBe(true);
    expect(ready(await control('unload'))).toBe(0);
    expect(await server.isModelReady('add_sub')).toBe(false);
  });

  it("unloads an ensemble's models with it (unload_model(unload_dependents=True))", async () => {
    const repo = await python.repository(['model_control', 'add_sub']);
    // One step: add_sub, which nothing else uses.
    await mkdir(join(repo, 'pipeline', '1'), { recursive: true });
    await writeFile(
      join(repo, 'pipeline', 'config.pbtxt'),
      `platform: "ensemble"
input [ { name: "A" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "B" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "SUM" data_type: TYPE_FP32 dims: [ 4 ] }, { name: "DIFF" data_type: TYPE_FP32 dims: [ 4 ] } ]
ensemble_scheduling { step [ { model_name: "add_sub" model_version: -1 input_map { key: "INPUT0" value: "A" } input_map { key: "INPUT1" value: "B" } output_map { key: "OUTPUT0" value: "SUM" } output_map { key: "OUTPUT1" value: "DIFF" } } ] }`,
    );
    const server = (python.state.server = await InferenceServer.start({ modelRepository: repo, backends: [pythonBackend()], modelControlMode: 'explicit', startupModels: ['*'] }));
    const control = (op: string) =>
      server.infer('model_control', { inputs: { OP: { datatype: 'BYTES', shape: [1], data: [op] }, NAME: { datatype: 'BYTES', shape: [1], data: ['pipeline'] } } });
    expect(await server.isModelReady('add_sub')).toBe(true);
    await control('unload_dependents');
    expect(await server.isModelReady('pipeline')).toBe(false);
    expect(await server.isModelReady('add_sub')).toBe(false);
  });

  it("loads with a config override in Triton's JSON form (load_model(config=...)): lowerCamelCase names and 64-bit integers as strings; a bad one fails naming the field", async () => {
    const server = await python.start(['model_control', 'add_sub'], { modelControlMode: 'explicit', startupModels: ['model_control'] });
    const load = (config: unknown) =>
      server.infer('model_control', {
        inputs: {
          OP: { datatype: 'BYTES', shape: [1], data: ['load'] },
          NAME: { datatype: 'BYTES', shape: [1], data: ['add_sub'] },
          CONFIG: { datatype: 'BYTES', shape: [1], data: [JSON.stringify(config)] },
        },
      });
    const tensor = (name: string) => ({ name, dataType: 'TYPE_FP32', dims: ['4'] });
    const config = { backend: 'python', maxBatchSize: '0', input: [tensor('INPUT0'), tensor('INPUT1')], output: [tensor('OUTPUT0'), tensor('OUTPUT1')] };
    expect((await load(config)).outputs.READY!.data).toEqual(new Uint8Array([1]));
    expect((await server.modelConfig('add_sub')).input.map((input) => input.dims)).toEqual([[4], [4]]);
    const refused = await load({ ...config, surprise: 1 }).then(
      () => undefined,
      (error: unknown) => error as Error,
    );
    expect(refused?.message).toMatch(/surprise/);
  });

  it("asks the model's is_ready(): a model that says no is not ready, though loaded", async () => {
    const server = await python.start(['not_ready', 'add_sub']);
    expect(await server.isModelReady('not_ready')).toBe(false);
    expect(await server.isModelReady('add_sub')).toBe(true);
    await expect(server.infer('not_ready', { inputs: { INPUT0: fp32(1) } })).resolves.toBeDefined();
  });

  it('exports custom metrics (pb_utils.MetricFamily) in server.metrics()', async () => {
    const backend = pythonBackend();
    const repo = await python.repository(['metrics']);
    const server = (python.state.server = await InferenceServer.start({ modelRepository: repo, backends: [backend] }));
    for (let i = 0; i < 3; i++) await server.infer('metrics', { inputs: { INPUT0: fp32(i) } });
    const family = [...backend.customMetrics!()].find((f) => f.name === 'requests_seen_total')!;
    expect(family).toMatchObject({ kind: 'counter', description: 'Requests this model has seen' });
    expect([...family.metrics]).toEqual([expect.objectContaining({ labels: { model: 'metrics' }, value: 3 })]);
    const text = await server.metrics();
    expect(text).toContain('# TYPE requests_seen_total counter');
    expect(text).toContain('requests_seen_total{model="metrics"} 3');
  });

  it("passes a sequence's correlation id and START/END flags to the model", async () => {
    const server = await python.start(['sequence_echo']);
    const step = (start: boolean, end: boolean, id: bigint | number) =>
      server.infer('sequence_echo', { inputs: { INPUT0: fp32(0) }, sequence: { id, start, end } });
    const read = (r: Awaited<ReturnType<typeof step>>) => [(r.outputs.CORRID!.data as BigUint64Array)[0], (r.outputs.FLAGS!.data as Uint32Array)[0]];
    const big = 2n ** 64n - 5n;
    expect(read(await step(true, false, big))).toEqual([big, 1]);
    expect(read(await step(false, false, big))).toEqual([big, 0]);
    expect(read(await step(false, true, big))).toEqual([big, 2]);
    expect(read(await step(true, true, 42))).toEqual([42n, 3]);
  });

  it('is loaded by name for backend: "python" when not given to the server', async () => {
    const repo = await python.repository(['add_sub']);
    const server = (python.state.server = await InferenceServer.start({ modelRepository: repo }));
    await expect(server.infer('add_sub', { inputs: { INPUT0: fp32(1, 2, 3, 4), INPUT1: fp32(1, 1, 1, 1) } })).resolves.toBeDefined();
  });
});

/** The environment tests make venvs; some Python builds ship without the venv module. */
const venvMissing: string | undefined =
  pythonMissing ??
  (() => {
    try {
      execFileSync('python3', ['-c', 'import venv'], { stdio: 'ignore' });
      return undefined;
    } catch {
      return "python3 has no venv module (Debian: apt-get install python3-venv)";
    }
  })();
if (venvMissing && !pythonMissing) console.warn(`skipping the Python environment tests: ${venvMissing}`);

describe.skipIf(venvMissing)('Python environments', () => {
  const python = usePythonServer();

  it('runs a model in its own venv (EXECUTION_ENV_PATH), as a directory and packed as .tar.gz', async () => {
    const repo = await python.repository(['venv_model']);
    const env = join(repo, 'venv_model', 'env');
    execFileSync('python3', ['-m', 'venv', '--system-site-packages', '--without-pip', env]);
    const cache = join(repo, 'cache');
    const server = (python.state.server = await InferenceServer.start({
      modelRepository: repo,
      modelControlMode: 'explicit',
      startupModels: ['venv_model'],
      backends: [pythonBackend({ environmentCacheDirectory: cache })],
    }));
    const run = () => server.infer('venv_model', { inputs: {} });
    expect(text((await run()).outputs.PREFIX)).toBe(env);

    execFileSync('tar', ['-czf', join(repo, 'venv_model', 'env.tar.gz'), '-C', env, '.']);
    const config = (await server.modelConfig('venv_model')) as { parameters: Record<string, { string_value: string }> };
    config.parameters.EXECUTION_ENV_PATH = { string_value: '$$TRITON_MODEL_DIRECTORY/env.tar.gz' };
    await server.loadModel('venv_model', { config });
    expect(text((await run()).outputs.PREFIX).startsWith(cache)).toBe(true);
  });

  it('names what to install when the interpreter is missing or lacks numpy', async () => {
    const repo = await python.repository(['add_sub']);
    const bare = join(repo, 'bare-env');
    execFileSync('python3', ['-m', 'venv', '--without-pip', bare]);
    for (const [interpreter, expected] of [
      ['/nonexistent/python3', /the Python interpreter '\/nonexistent\/python3' .* was not found: install Python 3 with numpy/],
      [join(bare, 'bin', 'python3'), /numpy is not installed for .*bare-env.*: install it with '.* -m pip install numpy'/],
    ] as const) {
      const server = await InferenceServer.start({ modelRepository: repo, backends: [pythonBackend({ interpreter })] });
      const [entry] = await server.repositoryIndex();
      await server.stop();
      expect(entry!.state).toBe('UNAVAILABLE');
      expect(entry!.reason).toMatch(expected);
    }
  });
});
