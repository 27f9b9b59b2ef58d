import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { InferenceError } from '../errors.js';
import { isInsideDirectory } from '../model/path-inside.js';
import { versionDirectories } from './local-repository-root.js';
import type { ModelSource } from './model-source.js';

/*
 * Triton's "load with model file override" (its LocalizeRepoAgent): the files a load
 * carries are written into a fresh temporary model directory, and the model is loaded
 * from there whether or not the repository has it. The load's config applies as an
 * override, so no config.pbtxt is written. Texts are Triton's.
 */

/** The most bytes one load may carry in all: what one gRPC message holds in Triton (2^31-1). The frontends' own limits are lower. */
export const MAX_MODEL_FILE_BYTES = 2 ** 31 - 1;

/**
 * Writes `files` (paths relative to the model directory) into a new temporary directory
 * and describes it as a model; the source's `removeDirectory` deletes it. Nothing is
 * left behind when this fails.
 */
export async function writeModelFiles(name: string, files: Readonly<Record<string, Uint8Array>>, hasConfig: boolean): Promise<ModelSource> {
  let total = 0;
  for (const [path, content] of Object.entries(files)) {
    // In-process callers are not held to the type by a wire format.
    if (!(content instanceof Uint8Array)) throw new InferenceError('INVALID_ARG', `File parameter 'file:${path}' must have bytes type for its value`);
    total += content.byteLength;
  }
  if (total > MAX_MODEL_FILE_BYTES) {
    throw new InferenceError('RESOURCE_EXHAUSTED', `model files of ${total} bytes exceed the ${MAX_MODEL_FILE_BYTES} bytes one load may carry`);
  }
  if (!hasConfig) throw new InferenceError('INVALID_ARG', "Load parameter 'config' must be specified for model file override");

  const directory = await mkdtemp(join(tmpdir(), 'tritium-model-'));
  const removeDirectory = () => rm(directory, { recursive: true, force: true });
  try {
    for (const [path, content] of Object.entries(files)) await writeInside(directory, path, content);
    return { name, directory, configPath: undefined, versions: await versionDirectories(name, directory), removeDirectory };
  } catch (error) {
    await removeDirectory();
    throw error;
  }
}

/** Writes one file, refusing a path that leads out of the directory (an absolute path, a '..' too many). */
async function writeInside(directory: string, path: string, content: Uint8Array): Promise<void> {
  const target = resolve(directory, path);
  if (target === directory || !(await isInsideDirectory(target, directory))) {
    throw new InferenceError('INVALID_ARG', `Invalid file parameter 'file:${path}' with normalized path '${target}' must stay within model directory.`);
  }
  try {
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, content);
  } catch (error) {
    // A name component past NAME_MAX, a directory already written as a file, a NUL: the file system's words follow.
    throw InferenceError.from(error, 'INVALID_ARG', `Invalid file parameter 'file:${path}'`);
  }
}
