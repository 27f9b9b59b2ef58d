import { readFile } from 'node:fs/promises';
import { InferenceError } from '../errors.js';
import { pathInside } from './path-inside.js';
import type { ServedModelVersion } from './served-model-version.js';

/** Each served version's label files, read once on first use (they are part of the loaded model). */
const loaded = new WeakMap<ServedModelVersion, Map<string, Promise<readonly string[]>>>();

/**
 * The labels an output's `label_filename` names (one per line, in class order), or
 * undefined when the output has none: what Triton's classification extension reports.
 */
export function outputLabels(served: ServedModelVersion, output: string): Promise<readonly string[]> | undefined {
  const { config, modelDirectory, name } = served.context;
  const filename = config.output?.find((o) => o.name === output)?.label_filename;
  if (!filename) return undefined;
  let files = loaded.get(served);
  if (!files) loaded.set(served, (files = new Map()));
  let labels = files.get(filename);
  if (!labels) {
    labels = readLabels(modelDirectory, filename, `model '${name}' output '${output}'`).catch((error: unknown) => {
      files.delete(filename);
      throw error;
    });
    files.set(filename, labels);
  }
  return labels;
}

/** One label per line; the file must lie inside the model's directory (a config override comes from a client). */
async function readLabels(modelDirectory: string, filename: string, where: string): Promise<readonly string[]> {
  const path = await pathInside(modelDirectory, filename, `${where}: label_filename`);
  const text = await readFile(path, 'utf8').catch((error: Error) => {
    throw new InferenceError('INTERNAL', `${where}: cannot read its label file '${filename}': ${error.message}`);
  });
  return text.split('\n').map((line) => line.replace(/\r$/, '')).filter((line, i, all) => line !== '' || i < all.length - 1);
}
