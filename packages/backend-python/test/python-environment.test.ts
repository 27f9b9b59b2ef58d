import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ModelConfig } from '@tritium/core';
import { environmentOptions, pythonEnvironment } from '../src/python-environment.js';

// A model's config may come from a client (a load with a config override): it may not
// pick the program the server runs, nor an environment outside the model.
let root: string;
let model: string;
let shared: string;

/** A directory that looks like a venv: bin/python3, executable (never run here). */
async function fakeEnvironment(directory: string): Promise<void> {
  await mkdir(join(directory, 'bin'), { recursive: true });
  await writeFile(join(directory, 'bin', 'python3'), '#!/bin/sh\n');
  await chmod(join(directory, 'bin', 'python3'), 0o755);
}

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'tritium-python-env-'));
  model = join(root, 'repo', 'm');
  shared = join(root, 'shared-envs');
  await fakeEnvironment(join(model, 'env'));
  await fakeEnvironment(join(shared, 'py'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const withParameters = (parameters: Record<string, string>): ModelConfig => ({
  name: 'm',
  parameters: Object.fromEntries(Object.entries(parameters).map(([key, value]) => [key, { string_value: value }])),
});
const environment = (parameters: Record<string, string>, roots: string[] = []) =>
  pythonEnvironment(withParameters(parameters), model, environmentOptions({ executionEnvironmentRoots: roots, environmentCacheDirectory: join(root, 'cache') }));

describe('pythonEnvironment', () => {
  it('refuses PYTHON_INTERPRETER, pointing at pythonBackend({ interpreter })', async () => {
    await expect(environment({ PYTHON_INTERPRETER: '/bin/cat' })).rejects.toMatchObject({
      code: 'INVALID_ARG',
      message: expect.stringMatching(/^model 'm': the PYTHON_INTERPRETER parameter is not accepted: .*pythonBackend\(\{ interpreter \}\)/),
    });
    await expect(environment({ PYTHON_INTERPRETER: '' })).rejects.toMatchObject({ code: 'INVALID_ARG' });
  });

  it("takes an EXECUTION_ENV_PATH inside the model's directory, with $$TRITON_MODEL_DIRECTORY or relative", async () => {
    expect((await environment({ EXECUTION_ENV_PATH: '$$TRITON_MODEL_DIRECTORY/env' })).interpreter).toBe(join(model, 'env', 'bin', 'python3'));
    expect((await environment({ EXECUTION_ENV_PATH: 'env' })).interpreter).toBe(join(model, 'env', 'bin', 'python3'));
  });

  it("refuses an EXECUTION_ENV_PATH outside the model's directory, by path, '..' or a link, naming the parameter and the option", async () => {
    await symlink(join(shared, 'py'), join(model, 'linked-env'));
    for (const path of [join(shared, 'py'), '$$TRITON_MODEL_DIRECTORY/../../../shared-envs/py', '/usr', 'linked-env', '$$TRITON_MODEL_DIRECTORY/linked-env']) {
      await expect(environment({ EXECUTION_ENV_PATH: path }), path).rejects.toMatchObject({
        code: 'INVALID_ARG',
        message: expect.stringMatching(/^model 'm': EXECUTION_ENV_PATH '.*' lies outside the model's directory: .*pythonBackend\(\{ executionEnvironmentRoots \}\)/),
      });
    }
  });

  it('takes an environment under a root the operator allowed, and only there', async () => {
    expect((await environment({ EXECUTION_ENV_PATH: join(shared, 'py') }, [shared])).interpreter).toBe(join(shared, 'py', 'bin', 'python3'));
    await symlink(join(shared, 'py'), join(model, 'linked-env'));
    expect((await environment({ EXECUTION_ENV_PATH: 'linked-env' }, [shared])).interpreter).toBe(join(model, 'linked-env', 'bin', 'python3'));
    // A root that does not exist allows nothing else.
    await expect(environment({ EXECUTION_ENV_PATH: join(shared, 'py') }, [join(root, 'missing')])).rejects.toMatchObject({ code: 'INVALID_ARG' });
  });

  it("does not echo tar's output when a packed environment cannot be unpacked", async () => {
    await writeFile(join(model, 'env.tar.gz'), 'SECRET-CONTENT, not an archive');
    const error = await environment({ EXECUTION_ENV_PATH: '$$TRITON_MODEL_DIRECTORY/env.tar.gz' }).catch((e: Error) => e);
    expect(error).toMatchObject({ code: 'UNAVAILABLE', message: expect.stringMatching(/unpacking '.*env\.tar\.gz' failed \(tar exit code \d+\)/) });
    expect((error as Error).message).not.toMatch(/gzip|SECRET/);
  });
});
