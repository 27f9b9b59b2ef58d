import type { Forest } from './forest.js';
import { unsupportedModel } from './model-error.js';

export function readXgboostJson(_text: string, file: string, _allowUnknownField: boolean): Forest {
  throw unsupportedModel(file, 'model_type xgboost_json is not read yet');
}
