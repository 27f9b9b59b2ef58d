import { readFile } from 'node:fs/promises';
import { InferenceError, pathInside } from '@tritium/core/backend';
import type { Forest } from './forest.js';
import { readLightGbm } from './lightgbm.js';
import { unsupportedModel } from './model-error.js';
import type { ModelType } from './parameters.js';
import { readXgboostBinary } from './xgboost-binary.js';
import { readXgboostJson, readXgboostUbj } from './xgboost-json.js';

/** Triton FIL's file name for each model_type. */
export const MODEL_FILES: Readonly<Record<ModelType, string>> = {
  xgboost: 'xgboost.model',
  xgboost_json: 'xgboost.json',
  xgboost_ubj: 'xgboost.ubj',
  lightgbm: 'model.txt',
  treelite_checkpoint: 'checkpoint.tl',
};

/** What to do with a format this backend does not read yet. */
const CONVERSIONS: Partial<Record<ModelType, string>> = {
  treelite_checkpoint: 'Treelite checkpoints are not read yet: export the model from its framework as XGBoost JSON or a LightGBM model.txt',
};

/** The model file of a version directory: the config's default_model_filename, else FIL's name for the type; it must lie inside the directory. */
export function modelFilePath(versionDirectory: string, modelType: ModelType, configuredName: string, modelName: string): Promise<string> {
  return pathInside(versionDirectory, configuredName || MODEL_FILES[modelType], `model '${modelName}': default_model_filename`);
}

export async function loadForest(path: string, modelType: ModelType, allowUnknownField: boolean): Promise<Forest> {
  const conversion = CONVERSIONS[modelType];
  if (conversion) throw unsupportedModel(path, `model_type '${modelType}': ${conversion}`);
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw new InferenceError('NOT_FOUND', `FIL model file '${path}' cannot be read: ${(error as Error).message}`);
  }
  if (modelType === 'xgboost') return readXgboostBinary(bytes, path);
  if (modelType === 'xgboost_ubj') return readXgboostUbj(bytes, path, allowUnknownField);
  const text = bytes.toString('utf8');
  return modelType === 'lightgbm' ? readLightGbm(text, path) : readXgboostJson(text, path, allowUnknownField);
}
