export { pythonBackend } from './python-backend.js';
export type { PythonBackendOptions } from './python-backend.js';
export { tensorflowBackend } from './tensorflow-backend.js';
export type { TensorflowBackendOptions } from './tensorflow-backend.js';
export { createBackend } from './create-backend.js';
export { EXECUTION_ENV_PATH, PYTHON_INTERPRETER } from './python-environment.js';
