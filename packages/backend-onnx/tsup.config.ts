import { packageConfig } from '../../tsup.base.js';

// Sessions on worker threads start session-worker.mjs through import.meta.url, in the CommonJS build too.
export default packageConfig({ external: ['onnxruntime-node', 'onnxruntime-web', '@tritium/core'], shims: true, files: ['session-worker.mjs'] });
