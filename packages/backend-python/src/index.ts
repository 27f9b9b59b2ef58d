export { pythonBackend, createBackend } from './python-backend.js';
export type { PythonBackend, PythonBackendOptions } from './python-backend.js';
export { EXECUTION_ENV_PATH, PYTHON_INTERPRETER } from './python-environment.js';
export type { CustomMetrics, CustomMetricFamily, CustomMetric } from './custom-metrics.js';
