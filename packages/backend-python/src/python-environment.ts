import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { InferenceError, type ModelConfig } from '@tritium/core';

/** Triton's model parameter naming a Python environment: a directory (a venv) or a packed .tar.gz of one. */
export const EXECUTION_ENV_PATH = 'EXECUTION_ENV_PATH';
/** Our model parameter naming the interpreter itself, for models without an environment of their own. */
export const PYTHON_INTERPRETER = 'PYTHON_INTERPRETER';
/** Triton's placeholder for the model's directory in EXECUTION_ENV_PATH. */
const MODEL_DIRECTORY_PLACEHOLDER = '$$TRITON_MODEL_DIRECTORY';

/** The interpreter a model's stubs run, and what their environment adds. */
export interface PythonEnvironment {
  readonly interpreter: string;
  /** Variables set for the stub (PATH and the library path of an environment). */
  readonly env: Readonly<Record<string, string>>;
  /** Said in errors: where the interpreter came from. */
  readonly origin: string;
}

/**
 * Picks the interpreter for a model: its EXECUTION_ENV_PATH environment (unpacked once
 * and cached when packed), else its PYTHON_INTERPRETER parameter, else the backend's
 * default (`python3` on PATH). Fails with UNAVAILABLE naming what is missing.
 */
export async function pythonEnvironment(config: ModelConfig, modelDirectory: string, defaultInterpreter: string, cacheDirectory?: string): Promise<PythonEnvironment> {
  const parameters = config.parameters ?? {};
  const envPath = parameters[EXECUTION_ENV_PATH]?.string_value;
  if (envPath) {
    const path = resolve(modelDirectory, envPath.replaceAll(MODEL_DIRECTORY_PLACEHOLDER, modelDirectory));
    const directory = /\.(tar\.gz|tgz)$/.test(path) ? await unpackOnce(path, cacheDirectory ?? join(tmpdir(), 'tritium-python-envs')) : path;
    const interpreter = await firstExecutable([join(directory, 'bin', 'python3'), join(directory, 'bin', 'python')]);
    if (!interpreter) {
      throw new InferenceError('UNAVAILABLE', `${EXECUTION_ENV_PATH} '${envPath}' has no bin/python3: point it at a virtual environment or a packed one (.tar.gz)`);
    }
    const env = {
      PATH: `${join(directory, 'bin')}${delimiter}${process.env.PATH ?? ''}`,
      LD_LIBRARY_PATH: [join(directory, 'lib'), process.env.LD_LIBRARY_PATH].filter(Boolean).join(delimiter),
    };
    return { interpreter, env, origin: `${EXECUTION_ENV_PATH} '${envPath}'` };
  }
  const chosen = parameters[PYTHON_INTERPRETER]?.string_value;
  const wanted = chosen || defaultInterpreter;
  const origin = chosen ? `the ${PYTHON_INTERPRETER} parameter` : 'the backend default';
  const interpreter = await findExecutable(wanted);
  if (!interpreter) {
    throw new InferenceError(
      'UNAVAILABLE',
      `the Python interpreter '${wanted}' (${origin}) was not found: install Python 3 with numpy, or name another with pythonBackend({ interpreter }) or the model's ${PYTHON_INTERPRETER} parameter`,
    );
  }
  return { interpreter, env: {}, origin };
}

/** A bare name is looked up on PATH, as a shell would; a path is taken as it is. */
async function findExecutable(name: string): Promise<string | undefined> {
  if (name.includes('/')) return firstExecutable([resolve(name)]);
  return firstExecutable((process.env.PATH ?? '').split(delimiter).filter(isAbsolute).map((dir) => join(dir, name)));
}

async function firstExecutable(paths: readonly string[]): Promise<string | undefined> {
  for (const path of paths) {
    if (await access(path, constants.X_OK).then(() => true, () => false)) return path;
  }
  return undefined;
}

/**
 * Unpacks a packed environment into the cache, keyed by the archive's path, size and
 * modification time, so a changed archive unpacks anew. Unpacking goes to a temporary
 * directory renamed into place, so a crash half-way leaves nothing that looks done,
 * and of two loads unpacking at once, the second finds the first's.
 */
async function unpackOnce(archive: string, cacheDirectory: string): Promise<string> {
  const info = await stat(archive).catch(() => {
    throw new InferenceError('UNAVAILABLE', `${EXECUTION_ENV_PATH}: the packed environment '${archive}' does not exist`);
  });
  const key = createHash('sha256').update(`${archive}\0${info.size}\0${info.mtimeMs}`).digest('hex').slice(0, 16);
  const target = join(cacheDirectory, key);
  if (await stat(target).then(() => true, () => false)) return target;
  await mkdir(cacheDirectory, { recursive: true });
  const staging = await mkdtemp(join(cacheDirectory, `${key}.unpacking-`));
  try {
    await promisify(execFile)('tar', ['-xzf', archive, '-C', staging]);
    await rename(staging, target).catch(async (error: NodeJS.ErrnoException) => {
      // Another process unpacked the same archive first: use theirs.
      if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error;
      await rm(staging, { recursive: true, force: true });
    });
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw new InferenceError('UNAVAILABLE', `${EXECUTION_ENV_PATH}: unpacking '${archive}' failed: ${(error as Error).message}`, { cause: error });
  }
  return target;
}
