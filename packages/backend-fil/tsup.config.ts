import { packageConfig } from '../../tsup.base.js';

// The worker finds forest-worker.mjs (and the loop it runs) through import.meta.url, in the CommonJS build too.
export default packageConfig({ external: ['@tritium/core'], shims: true, files: ['forest-worker.mjs', 'forest-walk.mjs'] });
