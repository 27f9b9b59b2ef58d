import { packageConfig } from '../../tsup.base.js';

// The CommonJS build finds build/Release/shared_memory.node through import.meta.url too.
export default packageConfig({ external: ['@tritium/core'], shims: true });
