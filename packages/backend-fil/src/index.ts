export { filBackend, createBackend } from './backend.js';
export { INPUT_NAME, OUTPUT_NAME } from './fil-model.js';
export { MODEL_FILES } from './model-file.js';
export { MODEL_TYPES } from './parameters.js';
export type { ModelType } from './parameters.js';
