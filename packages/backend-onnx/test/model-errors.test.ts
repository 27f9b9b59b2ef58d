import { execFile } from 'node:child_process';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, test } from 'vitest';
import { InferenceError, validateModelConfig } from '@tritium/core';
import type { ModelConfig } from '@tritium/core';
import { readExternalData } from '../src/external-data.js';
import { onnxBackend } from '../src/index.js';
import { resolveModelFile } from '../src/model-file.js';
import { DETACHED, HealthLog, MODELS, fp32, outputsOf, range, request, useTempRepository } from './helpers.js';

const repo = useTempRepository();
const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const LOAD_IN_CHILD = fileURLToPath(new URL('./load-in-child.ts', import.meta.url));

const backend = onnxBackend();
let counter = 0;

/** Creates the model (no auto-complete: the config is taken as written) and one CPU instance. */
async function load(artifact: string | Uint8Array, config: ModelConfig, on = backend) {
  const name = `m${counter++}`;
  const files = await repo.current.addModel(name, artifact);
  const model = await on.createModel({ ...files, name, config: validateModelConfig({ name, backend: 'onnxruntime', ...config }), ...DETACHED });
  const instance = await model.createInstance({ name: `${name}_0`, kind: 'KIND_CPU', health: new HealthLog() });
  return { model, instance };
}

async function loadError(artifact: string | Uint8Array, config: ModelConfig, on = backend): Promise<InferenceError> {
  const error = await load(artifact, config, on).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(InferenceError);
  return error as InferenceError;
}

const addSub = (overrides: Partial<Record<'in0' | 'in1' | 'out0' | 'out1', object>> = {}, rest: ModelConfig = {}): ModelConfig => ({
  max_batch_size: 8,
  input: [
    { name: 'INPUT0', data_type: 'TYPE_FP32', dims: [16], ...overrides.in0 },
    { name: 'INPUT1', data_type: 'TYPE_FP32', dims: [16], ...overrides.in1 },
  ],
  output: [
    { name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [16], ...overrides.out0 },
    { name: 'OUTPUT1', data_type: 'TYPE_FP32', dims: [16], ...overrides.out1 },
  ],
  ...rest,
});

describe('a config that contradicts the model is refused, naming both sides', () => {
  test('an input name the model does not have', async () => {
    const error = await loadError('add_sub', addSub({ in1: { name: 'INPUTX' } }));
    expect(error.code).toBe('INVALID_ARG');
    expect(error.message).toMatch(/'INPUTX' is not in the model, whose inputs are: 'INPUT0', 'INPUT1'/);
  });

  test('an output name the model does not have', async () => {
    const error = await loadError('add_sub', addSub({ out1: { name: 'SUM' } }));
    expect(error.code).toBe('INVALID_ARG');
    expect(error.message).toMatch(/output 'SUM' is not in the model, whose outputs are: 'OUTPUT0', 'OUTPUT1'/);
  });

  test('a datatype', async () => {
    const error = await loadError('add_sub', addSub({ in0: { data_type: 'TYPE_INT32' } }));
    expect(error.code).toBe('INVALID_ARG');
    expect(error.message).toMatch(/expects datatype TYPE_INT32 for input 'INPUT0', model provides TYPE_FP32/);
  });

  test('a rank', async () => {
    const error = await loadError('add_sub', addSub({ out0: { dims: [4, 4] } }));
    expect(error.code).toBe('INVALID_ARG');
    expect(error.message).toMatch(/output 'OUTPUT0' has dims \[16\] in the model \(without the batch dimension\) but dims \[4,4\] in the configuration/);
  });

  test('a dimension', async () => {
    const error = await loadError('add_sub', addSub({ in0: { dims: [8] } }));
    expect(error.message).toMatch(/input 'INPUT0' has dims \[16\] in the model .* but dims \[8\]/);
  });

  test('the number of inputs', async () => {
    const config = addSub();
    config.input = config.input!.slice(0, 1);
    const error = await loadError('add_sub', config);
    expect(error.message).toMatch(/configuration expects 1 inputs \('INPUT0'\), model provides 2 \('INPUT0', 'INPUT1'\)/);
  });

  test('batching on a model without a variable first dimension', async () => {
    const error = await loadError('fixed_shape', {
      max_batch_size: 4,
      input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [3] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [4] }],
    });
    expect(error.code).toBe('INVALID_ARG');
    expect(error.message).toMatch(/supports batching \(max_batch_size 4\) but the first dimension of input 'INPUT0' in the model is not a variable-size batch dimension: model dims \[2,3\], configuration dims \[3\]/);
  });

  test('a reshape is what is compared with the model', async () => {
    const { instance } = await load('add_sub', addSub({ in0: { dims: [4, 4], reshape: { shape: [16] } }, in1: { dims: [2, 8], reshape: { shape: [16] } } }));
    // The server hands a backend its inputs in the reshape shape.
    const result = await instance.execute([
      request({ INPUT0: fp32(range(16), [1, 16]), INPUT1: fp32(range(16), [1, 16]) }, ['OUTPUT0']),
    ]);
    const out = outputsOf(result)[0]!.OUTPUT0!;
    expect(out.shape).toEqual([1, 16]);
    expect(Array.from(out.data as Float32Array)).toEqual(range(16, 0, 2));
    const error = await loadError('add_sub', addSub({ in0: { dims: [16], reshape: { shape: [4, 4] } } }));
    expect(error.message).toMatch(/has dims \[16\] in the model .* but reshape \[4,4\] in the configuration/);
  });
});

describe('outputs are compared with the model exactly, as Triton (compare_exact); inputs are not', () => {
  // unsqueeze: INPUT0 [batch, n] -> OUTPUT0 [batch, 1, n]
  const config = (input: number[], output: number[]): ModelConfig => ({
    max_batch_size: 4,
    input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: input }],
    output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: output }],
  });

  test('a fixed config dim where the model output is variable is refused', async () => {
    const error = await loadError('unsqueeze', config([-1], [1, 16]));
    expect(error.code).toBe('INVALID_ARG');
    expect(error.message).toMatch(/output 'OUTPUT0' has dims \[1,-1\] in the model \(without the batch dimension\) but dims \[1,16\] in the configuration \(an output's dims must equal the model's/);
    expect((await loadError('unsqueeze', config([-1], [-1, -1]))).message).toMatch(/but dims \[-1,-1\] in the configuration/);
  });

  test('-1 exactly where the model output is variable loads; an input may fix a variable dimension', async () => {
    const { instance } = await load('unsqueeze', config([3], [1, -1]));
    const [out] = outputsOf(await instance.execute([request({ INPUT0: fp32([1, 2, 3], [1, 3]) }, ['OUTPUT0'])]));
    expect(out!.OUTPUT0!.shape).toEqual([1, 1, 3]);
  });
});

describe('an optional input backed by an overridable initializer (which Triton accepts)', () => {
  test('is refused, and the message says why', async () => {
    const error = await loadError('overridable_initializer', {
      input: [
        { name: 'INPUT0', data_type: 'TYPE_FP32', dims: [4] },
        { name: 'B', data_type: 'TYPE_FP32', dims: [4], optional: true },
      ],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [4] }],
    });
    expect(error.code).toBe('INVALID_ARG');
    expect(error.message).toMatch(/configuration input 'B' is not in the model, whose inputs are: 'INPUT0' \(.*onnxruntime's JavaScript API ignores feeds for initializers\)/);
  });
});

describe('external data on onnxruntime-web, which reads the files for the model', () => {
  const web = onnxBackend({ runtime: 'web' });
  const config: ModelConfig = {
    max_batch_size: 4,
    input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [8] }],
    output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [8] }],
  };

  /** external_weights' model.onnx with its location 'external_weights.bin' replaced by one of the same length (the protobuf stays valid). */
  async function withLocation(location: string): Promise<Uint8Array> {
    const model = new Uint8Array(await readFile(join(MODELS, 'external_weights.onnx', 'model.onnx')));
    const old = new TextEncoder().encode('external_weights.bin');
    expect(location).toHaveLength(old.length);
    const at = Buffer.from(model).indexOf(Buffer.from(old));
    model.set(new TextEncoder().encode(location), at);
    return model;
  }

  test('a location outside the model directory is INVALID_ARG naming the model', async () => {
    const error = await loadError(await withLocation(`../${'x'.repeat(17)}`), config, web);
    expect(error.code).toBe('INVALID_ARG');
    expect(error.message).toMatch(/^model 'm\d+': external data location '\.\.\/x+' must name a file inside '.*\/1', but its '\.\.' leads out/);
  });

  test('a location that is a link to a file outside the model directory is INVALID_ARG, without its content', async () => {
    const files = await repo.current.addModel('linked', await withLocation('linked_weights.bin!!'));
    const secret = join(files.modelDirectory, '..', 'secret.bin');
    await writeFile(secret, 'secret-bytes');
    await symlink(secret, join(files.versionDirectory, 'linked_weights.bin!!'));
    const error = await readExternalData('linked', files.modelPath, await readFile(files.modelPath)).then(() => undefined, (e: unknown) => e as InferenceError);
    expect(error?.code).toBe('INVALID_ARG');
    expect(error?.message).toMatch(/^model 'linked': external data location 'linked_weights.bin!!' must name a file inside .*symbolic link/);
    expect(error?.message).not.toContain('secret-bytes');
  });

  test('a missing external data file is UNAVAILABLE naming the model', async () => {
    const error = await loadError(await withLocation('missing_weights.bin!'), config, web);
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toMatch(/^model 'm\d+': cannot read external data 'missing_weights\.bin!' of '.*model\.onnx': ENOENT/);
  });
});

describe('a model.onnx directory', () => {
  test('whose inner model.onnx is a link to a file outside is INVALID_ARG', async () => {
    const files = await repo.current.addModel('linked_dir', null);
    await mkdir(files.modelPath);
    await symlink(join(MODELS, 'add_sub.onnx'), join(files.modelPath, 'model.onnx'));
    const error = await resolveModelFile(files.modelPath, 'linked_dir').then(() => undefined, (e: unknown) => e as InferenceError);
    expect(error?.code).toBe('INVALID_ARG');
    expect(error?.message).toMatch(/^model 'linked_dir': the model directory's ONNX file 'model.onnx' must name a file inside .*symbolic link/);
  });
});

describe('model files that cannot serve', () => {
  test('garbage bytes: the error carries onnxruntime\'s reason', async () => {
    const error = await loadError(new TextEncoder().encode('this is not an ONNX model at all'), addSub());
    expect(error.code).toBe('INVALID_ARG');
    expect(error.message).toMatch(/onnxruntime-node 1\.30\.0 cannot load '.*model\.onnx': .*(protobuf|parse|load)/i);
  });

  test('a missing model.onnx is UNAVAILABLE', async () => {
    const name = `missing${counter++}`;
    const files = await repo.current.addModel(name, 'add_sub');
    const error = await backend
      .createModel({ ...files, modelPath: `${files.versionDirectory}/absent.onnx`, name, config: validateModelConfig({ name, backend: 'onnxruntime', ...addSub() }), ...DETACHED })
      .catch((e) => e);
    expect(error).toBeInstanceOf(InferenceError);
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toMatch(/unable to find '.*absent\.onnx' for model 'missing\d+'/);
  });

  test('a model.onnx directory without a model.onnx inside is UNAVAILABLE', async () => {
    const name = `emptydir${counter++}`;
    const files = await repo.current.addModel(name, 'add_sub');
    const modelPath = join(files.versionDirectory, 'empty.onnx');
    await mkdir(modelPath);
    const error = await backend.createModel({ ...files, modelPath, name, config: validateModelConfig({ name, backend: 'onnxruntime', ...addSub() }), ...DETACHED }).catch((e) => e);
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toMatch(/unable to find '.*\/1\/empty\.onnx\/model\.onnx'/);
  });

  test('a batch input counts as a model input', async () => {
    const error = await loadError('add_sub', addSub({}, { batch_input: [{ kind: 'BATCH_ELEMENT_COUNT', target_name: ['N'], data_type: 'TYPE_FP32', source_input: ['INPUT0'] }] }));
    expect(error.code).toBe('INVALID_ARG');
    expect(error.message).toMatch(/configuration expects 3 inputs \('INPUT0', 'INPUT1', 'N'\), model provides 2/);
  });

  test('bfloat16 tensors are UNSUPPORTED', async () => {
    const error = await loadError('identity_bf16', {
      max_batch_size: 4,
      input: [{ name: 'INPUT0', data_type: 'TYPE_BF16', dims: [-1] }],
      output: [{ name: 'OUTPUT0', data_type: 'TYPE_BF16', dims: [-1] }],
    });
    expect(error.code).toBe('UNSUPPORTED');
  });
});

describe('execution accelerators and session parameters', () => {
  test('a GPU accelerator on a GPU instance needs its provider library: UNAVAILABLE here, with onnxruntime\'s reason', async () => {
    // onnxruntime also logs the failed library load to stderr from native code: a child
    // process keeps that line off the test output, and the test reads it instead.
    const config = addSub({}, {
      instance_group: [{ kind: 'KIND_GPU', count: 1, gpus: [0] }],
      optimization: { execution_accelerators: { gpu_execution_accelerator: [{ name: 'tensorrt' }] } },
    });
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', LOAD_IN_CHILD, 'add_sub', JSON.stringify(config), 'KIND_GPU'], { cwd: ROOT });
    const error = JSON.parse(stdout) as { code: string; message: string };
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toMatch(/execution accelerator 'tensorrt', 'cuda' is not available with onnxruntime-node .*: .*shared library/i);
    expect(stderr).toMatch(/Failed to load library .*libonnxruntime_providers_shared/);
  });

  test('GPU accelerators are ignored for CPU instances, as in Triton', async () => {
    const { model } = await load(
      'add_sub',
      addSub({}, { optimization: { execution_accelerators: { gpu_execution_accelerator: [{ name: 'cuda' }] } } }),
    );
    expect(model.description).toMatch(/onnxruntime-node/);
  });

  test('OpenVINO is not in onnxruntime-node: UNSUPPORTED', async () => {
    const error = await loadError('add_sub', addSub({}, { optimization: { execution_accelerators: { cpu_execution_accelerator: [{ name: 'openvino' }] } } }));
    expect(error.code).toBe('UNSUPPORTED');
    expect(error.message).toMatch(/execution accelerator 'openvino' is not supported: onnxruntime-node 1\.30\.0 has no 'openvino' execution provider/);
  });

  test('an accelerator name the ONNX backend does not know is INVALID_ARG', async () => {
    const error = await loadError('add_sub', addSub({}, { optimization: { execution_accelerators: { cpu_execution_accelerator: [{ name: 'turbo' }] } } }));
    expect(error.code).toBe('INVALID_ARG');
    expect(error.message).toMatch(/unknown execution accelerator 'turbo'/);
  });

  test('invalid parameter values are INVALID_ARG naming the parameter', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['execution_mode', '2', /parameter 'execution_mode' is '2', expected 0 \(sequential\) or 1 \(parallel\)/],
      ['intra_op_thread_count', 'many', /parameter 'intra_op_thread_count' is 'many', expected an integer/],
      ['inter_op_thread_count', '-1', /parameter 'inter_op_thread_count' is '-1'/],
      ['enable_mem_arena', 'maybe', /parameter 'enable_mem_arena' is 'maybe', expected a boolean/],
      ['runtime', 'gpu', /parameter 'runtime' is 'gpu', expected "node"/],
    ];
    for (const [key, value, message] of cases) {
      const error = await loadError('add_sub', addSub({}, { parameters: { [key]: { string_value: value } } }));
      expect(error.code).toBe('INVALID_ARG');
      expect(error.message).toMatch(message);
    }
  });

  test('Triton\'s onnxruntime parameters and graph levels are accepted and the model runs', async () => {
    for (const level of [-1, 0, 1, 2]) {
      const { instance } = await load(
        'add_sub',
        addSub({}, {
          optimization: { graph: { level } },
          parameters: {
            intra_op_thread_count: { string_value: '1' },
            inter_op_thread_count: { string_value: '1' },
            execution_mode: { string_value: '1' },
            enable_mem_arena: { string_value: '0' },
            enable_mem_pattern: { string_value: 'false' },
            'session.use_device_allocator_for_initializers': { string_value: '1' },
          },
        }),
      );
      const [out] = outputsOf(await instance.execute([request({ INPUT0: fp32(range(16), [1, 16]), INPUT1: fp32(range(16), [1, 16]) }, ['OUTPUT0'])]));
      expect(Array.from(out!.OUTPUT0!.data as Float32Array)).toEqual(range(16, 0, 2));
    }
  });
});
