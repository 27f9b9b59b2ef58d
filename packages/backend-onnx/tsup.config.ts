import { packageConfig } from '../../tsup.base.js';

// Execution pool threads start pool-thread.mjs (which imports buffer-shelf.mjs) through import.meta.url, in the CommonJS build too.
export default packageConfig({ external: ['onnxruntime-node', 'onnxruntime-web', '@tritium/core'], shims: true, files: ['pool-thread.mjs', 'buffer-shelf.mjs'] });
