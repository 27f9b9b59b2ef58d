import type { Backend } from '@tritium/core/backend';
import { pythonBackend, type PythonBackendOptions } from './python-backend.js';
import { tensorflowBackend, type TensorflowBackendOptions } from './tensorflow-backend.js';

/**
 * What core's registry of official backends calls, `createBackend(name, settings)`, when a
 * model needs one of this package's backends, 'python' or 'tensorflow', and the application
 * passed none: `settings` is the server's `backendSettings[name]` (`{}` when none), options
 * as pythonBackend() or tensorflowBackend() takes them.
 */
export const createBackend = (name = 'python', settings: PythonBackendOptions & TensorflowBackendOptions = {}): Backend =>
  name === 'tensorflow' ? tensorflowBackend(settings) : pythonBackend(settings);
