import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { InferenceError, isInsideDirectory, type ModelConfig } from '@tritium/core/backend';

/** Triton's model parameter naming a Python environment: a directory (a venv) or a packed .tar.gz of one. */
export const EXECUTION_ENV_PATH = 'EXECUTION_ENV_PATH';
/**
 * A model parameter that once named the interpreter. A model's config may come from a
 * client (a load with a config override), so it may not pick a program to run: a
 * config that sets it is refused, pointing at pythonBackend({ interpreter }).
 */
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

/** What the server's operator chose: the backend's options. */
export interface EnvironmentOptions {
  /** The interpreter of models without an EXECUTION_ENV_PATH. */
  readonly interpreter: string;
  /** Directories outside a model's own where its EXECUTION_ENV_PATH may lie. */
  readonly executionEnvironmentRoots: readonly string[];
  /** Where packed environments are unpacked. */
  readonly cacheDirectory: string;
}

/** The backend's options, defaults filled: `python3` on PATH, no roots besides each model's directory, `<tmpdir>/tritium-python-envs`. */
export function environmentOptions(options: {
  readonly interpreter?: string;
  readonly executionEnvironmentRoots?: readonly string[];
  readonly environmentCacheDirectory?: string;
}): EnvironmentOptions {
  return {
    interpreter: options.interpreter ?? 'python3',
    executionEnvironmentRoots: options.executionEnvironmentRoots ?? [],
    cacheDirectory: options.environmentCacheDirectory ?? join(tmpdir(), 'tritium-python-envs'),
  };
}

/**
 * Picks the interpreter for a model: its EXECUTION_ENV_PATH environment (unpacked once
 * and cached when packed), which must lie inside the model's directory or one of
 * `executionEnvironmentRoots`, else the backend's interpreter. Fails with INVALID_ARG
 * for a parameter it refuses, UNAVAILABLE naming what is missing.
 */
export async function pythonEnvironment(config: ModelConfig, modelDirectory: string, options: EnvironmentOptions): Promise<PythonEnvironment> {
  const parameters = config.parameters ?? {};
  const model = `model '${config.name ?? ''}'`;
  if (parameters[PYTHON_INTERPRETER] !== undefined) {
    throw new InferenceError(
      'INVALID_ARG',
      `${model}: the ${PYTHON_INTERPRETER} parameter is not accepted: a model's config may not choose a program for the server to run; ` +
        `set the interpreter with pythonBackend({ interpreter }) (tritium serve: --backend-config=python,interpreter=<path>), or give the model an environment (${EXECUTION_ENV_PATH})`,
    );
  }
  const envPath = parameters[EXECUTION_ENV_PATH]?.string_value;
  if (envPath) {
    const path = resolve(modelDirectory, envPath.replaceAll(MODEL_DIRECTORY_PLACEHOLDER, modelDirectory));
    // Links resolved (a venv's bin/python3 may still link to the system's interpreter): in the model's directory or under a root the operator allowed.
    if (!(await isInsideDirectory(path, [modelDirectory, ...options.executionEnvironmentRoots]))) {
      throw new InferenceError(
        'INVALID_ARG',
        `${model}: ${EXECUTION_ENV_PATH} '${envPath}' lies outside the model's directory: put the environment inside it ($$TRITON_MODEL_DIRECTORY/...), ` +
          `or allow its directory with pythonBackend({ executionEnvironmentRoots }) (tritium serve: --backend-config=python,execution-env-root=<dir>)`,
      );
    }
    const directory = /\.(tar\.gz|tgz)$/.test(path) ? await unpackOnce(path, options.cacheDirectory) : path;
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
  const interpreter = await findExecutable(options.interpreter);
  if (!interpreter) {
    throw new InferenceError(
      'UNAVAILABLE',
      `the Python interpreter '${options.interpreter}' (the backend default) was not found: install Python 3 with numpy, or name another with pythonBackend({ interpreter })`,
    );
  }
  return { interpreter, env: {}, origin: 'the backend default' };
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
    // tar's own output stays out of the message: it could quote the archive's contents.
    const { code } = error as { code?: unknown };
    throw new InferenceError('UNAVAILABLE', `${EXECUTION_ENV_PATH}: unpacking '${archive}' failed (tar exit code ${String(code)}): is it a .tar.gz of an environment?`);
  }
  return target;
}
