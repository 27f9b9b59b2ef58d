import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InferenceError } from '../errors.js';
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
    labels = readFile(join(modelDirectory, filename), 'utf8').then(
      (text) => text.split('\n').map((line) => line.replace(/\r$/, '')).filter((line, i, all) => line !== '' || i < all.length - 1),
      (error: Error) => {
        files.delete(filename);
        throw new InferenceError('INTERNAL', `model '${name}' output '${output}': cannot read its label file '${filename}': ${error.message}`);
      },
    );
    files.set(filename, labels);
  }
  return labels;
}
