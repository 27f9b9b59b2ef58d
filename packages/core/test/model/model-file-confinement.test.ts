import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { InferenceError, parseModelConfig, validateModelConfig } from '@tritium/core';
import { pathInside } from '@tritium/core/backend';
import { testConfig } from '../helpers/repository.js';
import { rejection, useServerFixture } from '../helpers/server-fixture.js';

// A model's config may come from a client (a load with a config override): every file
// it names must lie inside the model's directories, links resolved.
const fx = useServerFixture();

/** A file outside every model's directory, holding what a client must never see. */
let outside: string;
const SECRET = 'root:x:0:0:secret-line';
beforeEach(async () => {
  outside = await mkdtemp(join(tmpdir(), 'tritium-outside-'));
  await writeFile(join(outside, 'secret.txt'), `${SECRET}\n`);
});
afterEach(async () => {
  await rm(outside, { recursive: true, force: true });
});

const labelled = (filename: string) =>
  testConfig({}).replace('output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] }', `output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] label_filename: "${filename}" }`);

describe('pathInside', () => {
  it('joins a name that stays inside, through subdirectories and links that stay inside', async () => {
    await mkdir(join(outside, 'model', 'sub'), { recursive: true });
    await writeFile(join(outside, 'model', 'sub', 'file'), '');
    await symlink(join(outside, 'model', 'sub'), join(outside, 'model', 'inner-link'));
    const model = join(outside, 'model');
    expect(await pathInside(model, 'sub/file', 'f')).toBe(join(model, 'sub', 'file'));
    expect(await pathInside(model, 'sub/../sub/file', 'f')).toBe(join(model, 'sub', 'file'));
    expect(await pathInside(model, 'inner-link/file', 'f')).toBe(join(model, 'inner-link', 'file'));
    // Missing files are the reader's to report.
    expect(await pathInside(model, 'sub/missing', 'f')).toBe(join(model, 'sub', 'missing'));
  });

  it("refuses '..', absolute paths, NUL and links leading out, naming the field and never what the file holds", async () => {
    const model = join(outside, 'model');
    await mkdir(model);
    await symlink(join(outside, 'secret.txt'), join(model, 'file-link'));
    await symlink(outside, join(model, 'dir-link'));
    for (const [name, reason] of [
      ['../secret.txt', /'\.\.' leads out/],
      ['sub/../../secret.txt', /'\.\.' leads out/],
      [join(outside, 'secret.txt'), /absolute path/],
      ['a\0b', /NUL/],
      ['file-link', /symbolic link/],
      ['dir-link/secret.txt', /symbolic link/],
      // Not even whether a file exists out there is told.
      ['dir-link/missing.txt', /symbolic link/],
    ] as const) {
      const error = await rejection(pathInside(model, name, "model 'm': label_filename"));
      expect(error.code, name).toBe('INVALID_ARG');
      expect(error.message, name).toMatch(/^model 'm': label_filename '.*' must name a file inside/);
      expect(error.message, name).toMatch(reason);
      expect(error.message).not.toContain(SECRET);
    }
  });
});

describe('validateModelConfig refuses file names that lead out of the model', () => {
  const base = 'name: "m" backend: "b" input { name: "I" data_type: TYPE_FP32 dims: [1] } ';
  it.each([
    ['default_model_filename', `default_model_filename: "../../other/1/model.onnx"`],
    ['default_model_filename', `default_model_filename: "/etc/passwd"`],
    ["cc_model_filenames['7.5']", `cc_model_filenames { key: "7.5" value: "../x.plan" }`],
    ["output 'O' label_filename", `output { name: "O" data_type: TYPE_FP32 dims: [1] label_filename: "../../../../etc/passwd" }`],
    [
      "model_warmup 'w' input 'I' input_data_file",
      `model_warmup { name: "w" batch_size: 1 inputs { key: "I" value { data_type: TYPE_FP32 dims: [1] input_data_file: "../../secret" } } }`,
    ],
    [
      "state 'S' initial_state 'i' data_file",
      `sequence_batching { state { input_name: "S" output_name: "T" data_type: TYPE_FP32 dims: [1] initial_state { data_type: TYPE_FP32 dims: [1] data_file: "/etc/shadow" name: "i" } } }`,
    ],
  ])('%s', (field, text) => {
    const error = (() => {
      try {
        validateModelConfig(parseModelConfig(base + text));
      } catch (thrown) {
        return thrown as InferenceError;
      }
      throw new Error('accepted');
    })();
    expect(error).toBeInstanceOf(InferenceError);
    expect(error.code).toBe('INVALID_ARG');
    expect(error.message).toContain(`model 'm': ${field} '`);
    expect(error.message).toMatch(/must name a file inside the model's directories/);
  });
});

describe('a load with a config override reaches nothing outside the model', () => {
  it("refuses label_filename '../../../../etc/passwd' at load, and serves a label file inside", async () => {
    const server = await fx.start({ m: { config: labelled('labels.txt') } }, { modelControlMode: 'explicit' });
    await writeFile(join(fx.repo!.path, 'm', 'labels.txt'), 'cat\ndog\n');
    await server.loadModel('m');
    expect(await server.outputLabels('m', 'OUTPUT0')).toEqual(['cat', 'dog']);
    const error = await rejection(server.loadModel('m', { config: labelled('../../../../etc/passwd') }));
    expect(error.message).toMatch(/label_filename '\.\.\/\.\.\/\.\.\/\.\.\/etc\/passwd' must name a file inside/);
    // The old version still serves its own labels.
    expect(await server.outputLabels('m', 'OUTPUT0')).toEqual(['cat', 'dog']);
  });

  it('refuses a label file that is a link to a file outside, without its lines', async () => {
    const server = await fx.start({ m: { config: labelled('labels.txt') } });
    await symlink(join(outside, 'secret.txt'), join(fx.repo!.path, 'm', 'labels.txt'));
    const error = await rejection(server.outputLabels('m', 'OUTPUT0'));
    expect(error.code).toBe('INVALID_ARG');
    expect(error.message).toMatch(/label_filename 'labels.txt' .* symbolic link/);
    expect(error.message).not.toContain(SECRET);
  });

  it("refuses a default_model_filename with '..' or an absolute path, or a model file linked from outside", async () => {
    const server = await fx.start({ m: { config: testConfig({}) }, other: { config: testConfig({}) } }, { modelControlMode: 'explicit' });
    for (const filename of ['../../other/1/model.test', join(outside, 'secret.txt')]) {
      const error = await rejection(server.loadModel('m', { config: testConfig({ extra: `default_model_filename: "${filename}"` }) }));
      expect(error.code, filename).toBe('INTERNAL');
      expect(error.message, filename).toMatch(/^failed to load 'm', failed to poll from model repository: .*default_model_filename '.*' must name a file inside/);
    }
    await symlink(join(outside, 'secret.txt'), join(fx.repo!.path, 'm', '1', 'linked.test'));
    const linked = await rejection(server.loadModel('m', { config: testConfig({ extra: 'default_model_filename: "linked.test"' }) }));
    expect(linked.message).toMatch(/default_model_filename 'linked.test' .* symbolic link/);
    expect(linked.message).not.toContain(SECRET);
    // A name inside the version directory loads.
    await writeFile(join(fx.repo!.path, 'm', '1', 'renamed.test'), '');
    await server.loadModel('m', { config: testConfig({ extra: 'default_model_filename: "renamed.test"' }) });
    expect(await server.isModelReady('m')).toBe(true);
  });

  it('refuses warmup and initial-state data files linked from outside', async () => {
    const server = await fx.start({ m: { config: testConfig({}) } }, { modelControlMode: 'explicit' });
    const model = join(fx.repo!.path, 'm');
    await mkdir(join(model, 'warmup'));
    await mkdir(join(model, 'initial_state'));
    await symlink(join(outside, 'secret.txt'), join(model, 'warmup', 'data.bin'));
    await symlink(join(outside, 'secret.txt'), join(model, 'initial_state', 'start.bin'));
    const warmup = `model_warmup [ { name: "w" batch_size: 1 inputs { key: "INPUT0" value { data_type: TYPE_FP32 dims: [ 4 ] input_data_file: "data.bin" } } } ]`;
    const warm = await rejection(server.loadModel('m', { config: testConfig({ extra: warmup }) }));
    expect(warm.message).toMatch(/input_data_file 'data.bin' .* symbolic link/);
    const controls = `control_input { name: "START" control { kind: CONTROL_SEQUENCE_START int32_false_true: [ 0, 1 ] } }
      control_input { name: "READY" control { kind: CONTROL_SEQUENCE_READY bool_false_true: [ false, true ] } }`;
    const state = `state { input_name: "STATE_IN" output_name: "STATE_OUT" data_type: TYPE_FP32 dims: [ 1 ]
      initial_state { data_type: TYPE_FP32 dims: [ 1 ] data_file: "start.bin" name: "initial" } }`;
    const sequence = testConfig({ behavior: 'accumulate', maxBatchSize: 4, dims: [1], extra: `sequence_batching { ${controls} ${state} }` });
    const initial = await rejection(server.loadModel('m', { config: sequence }));
    expect(initial.message).toMatch(/data_file 'start.bin' .* symbolic link/);
    expect(`${warm.message}${initial.message}`).not.toContain(SECRET);
  });
});
