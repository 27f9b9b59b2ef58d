import { InferenceError } from '../errors.js';

/** The INVALID_ARG error for a fault in a model's configuration, naming the model. */
export function modelConfigError(model: string, message: string): InferenceError {
  return new InferenceError('INVALID_ARG', `model '${model}': ${message}`);
}
