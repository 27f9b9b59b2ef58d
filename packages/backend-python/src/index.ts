export { pythonBackend, createBackend } from './python-backend.js';
export type { PythonBackendOptions } from './python-backend.js';
export { EXECUTION_ENV_PATH, PYTHON_INTERPRETER } from './python-environment.js';
