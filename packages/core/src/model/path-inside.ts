import { realpath } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { fileNameEscape } from '../config/file-names.js';
import { InferenceError } from '../errors.js';

/** Whether `path` lies inside `directory` (or one of several) once symbolic links are resolved on both. */
export async function isInsideDirectory(path: string, directory: string | readonly string[]): Promise<boolean> {
  const target = await resolvedPath(resolve(path));
  for (const each of typeof directory === 'string' ? [directory] : directory) {
    const root = await resolvedPath(resolve(each));
    if (target === root || target.startsWith(root.endsWith(sep) ? root : root + sep)) return true;
  }
  return false;
}

/**
 * The path with its links resolved. Of a path that does not exist (yet), the part that
 * does is resolved and the rest appended: that is where opening it would lead.
 */
async function resolvedPath(path: string): Promise<string> {
  const real = await realpath(path).catch(() => undefined);
  if (real !== undefined) return real;
  const parent = dirname(path);
  return parent === path ? path : join(await resolvedPath(parent), basename(path));
}

/**
 * The path of a file a model's config names (`field`, e.g. "model 'm': label_filename"),
 * relative to `directory`: INVALID_ARG when the name, or a symbolic link on its way,
 * leads out of the directory. Whether the file exists is left to the reader.
 */
export async function pathInside(directory: string, name: string, field: string): Promise<string> {
  const refuse = (reason: string) => new InferenceError('INVALID_ARG', `${field} '${name}' must name a file inside '${directory}', but ${reason}`);
  const escape = fileNameEscape(name);
  if (escape) throw refuse(escape);
  const path = join(directory, name);
  if (!(await isInsideDirectory(path, directory))) throw refuse('it resolves, through a symbolic link, to a file outside it');
  return path;
}
