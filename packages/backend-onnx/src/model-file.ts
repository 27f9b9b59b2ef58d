import { stat } from 'node:fs/promises';
import { InferenceError, pathInside } from '@tritium/core/backend';

/** The ONNX file inside a `model.onnx` directory (Triton's rule for models with external weights). */
const MODEL_FILE_IN_DIRECTORY = 'model.onnx';

/**
 * Finds the ONNX file for a version's model path: the path itself when it is a file,
 * or `<path>/model.onnx` when it is a directory holding the model with its external
 * data files, as Triton's ONNX Runtime backend does. A missing file is UNAVAILABLE; an
 * inner file linked from outside the directory is INVALID_ARG (core checked `modelPath`).
 */
export async function resolveModelFile(modelPath: string, modelName: string): Promise<string> {
  const info = await statOrUndefined(modelPath);
  if (!info) throw missing(modelPath, modelName);
  if (!info.isDirectory()) return modelPath;
  const inner = await pathInside(modelPath, MODEL_FILE_IN_DIRECTORY, `model '${modelName}': the model directory's ONNX file`);
  const innerInfo = await statOrUndefined(inner);
  if (!innerInfo || innerInfo.isDirectory()) throw missing(inner, modelName);
  return inner;
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
