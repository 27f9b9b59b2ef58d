import type { Backend } from '@tritium/core';
import { pythonBackend } from './python-backend.js';
import { tensorflowBackend } from './tensorflow-backend.js';

/** What the server's registry loads official backends by: this package serves 'python' and 'tensorflow'. */
export const createBackend = (name = 'python'): Backend => (name === 'tensorflow' ? tensorflowBackend() : pythonBackend());
