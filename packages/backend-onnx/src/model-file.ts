import { readFile, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, normalize, sep } from 'node:path';
import { InferenceError } from '@tritium/core';

/** The ONNX file inside a `model.onnx` directory (Triton's rule for models with external weights). */
export const MODEL_FILE_IN_DIRECTORY = 'model.onnx';

/**
 * Finds the ONNX file for a version's model path: the path itself when it is a file,
 * or `<path>/model.onnx` when it is a directory holding the model with its external
 * data files, as Triton's ONNX Runtime backend does. A missing file is UNAVAILABLE.
 */
export async function resolveModelFile(modelPath: string, modelName: string): Promise<string> {
  const info = await statOrUndefined(modelPath);
  if (!info) throw missing(modelPath, modelName);
  if (!info.isDirectory()) return modelPath;
  const inner = join(modelPath, MODEL_FILE_IN_DIRECTORY);
  const innerInfo = await statOrUndefined(inner);
  if (!innerInfo || innerInfo.isDirectory()) throw missing(inner, modelName);
  return inner;
}

/** An external data file of a model, for runtimes that cannot read files by themselves (wasm). */
export interface ExternalDataFile {
  /** The location as the model names it, relative to the model file. */
  readonly path: string;
  readonly data: Uint8Array;
}

/**
 * Reads the external data files a model refers to. ONNX stores each reference as a
 * StringStringEntryProto { key: "location", value: <relative path> }, so the file
 * names are found by scanning the serialized model for that entry instead of
 * parsing the whole protobuf. Locations must stay inside the model's directory.
 */
export async function readExternalData(modelFile: string, model: Uint8Array): Promise<ExternalDataFile[]> {
  const directory = dirname(modelFile);
  const files: ExternalDataFile[] = [];
  for (const location of externalDataLocations(model)) {
    const full = normalize(join(directory, location));
    if (isAbsolute(location) || !(full + sep).startsWith(normalize(directory) + sep) || full === normalize(directory)) {
      throw new InferenceError('INVALID_ARG', `model '${modelFile}': external data location '${location}' is outside the model's directory`);
    }
    try {
      files.push({ path: location, data: await readFile(full) });
    } catch (error) {
      throw new InferenceError('UNAVAILABLE', `model '${modelFile}': cannot read external data '${location}': ${(error as Error).message}`, {
        cause: error,
      });
    }
  }
  return files;
}

// Field 1 (key), length 8, "location", then field 2 (value).
const LOCATION_ENTRY = Uint8Array.from([0x0a, 0x08, ...new TextEncoder().encode('location'), 0x12]);

/** The distinct external data locations named in a serialized ONNX model, in order of appearance. */
export function externalDataLocations(model: Uint8Array): string[] {
  const found = new Set<string>();
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let from = 0;
  for (;;) {
    const at = indexOf(model, LOCATION_ENTRY, from);
    if (at < 0) break;
    let p = at + LOCATION_ENTRY.length;
    let length = 0;
    let shift = 0;
    while (p < model.length && shift < 35) {
      const byte = model[p++]!;
      length |= (byte & 0x7f) << shift;
      shift += 7;
      if ((byte & 0x80) === 0) break;
    }
    if (length > 0 && p + length <= model.length) {
      try {
        found.add(decoder.decode(model.subarray(p, p + length)));
      } catch {
        // Not UTF-8: not a location entry after all.
      }
    }
    from = at + 1;
  }
  return [...found];
}

function indexOf(haystack: Uint8Array, needle: Uint8Array, from: number): number {
  const first = needle[0]!;
  const last = haystack.length - needle.length;
  outer: for (let i = haystack.indexOf(first, from); i !== -1 && i <= last; i = haystack.indexOf(first, i + 1)) {
    for (let j = 1; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

async function statOrUndefined(path: string) {
  try {
    return await stat(path);
  } catch {
    return undefined;
  }
}

function missing(path: string, modelName: string): InferenceError {
  return new InferenceError('UNAVAILABLE', `unable to find '${path}' for model '${modelName}'`);
}
