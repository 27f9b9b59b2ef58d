import { packageConfig } from '../../tsup.base.js';

// The CommonJS build finds build/Release/torchscript.node through import.meta.url too.
export default packageConfig({ external: ['@tritium/core'], shims: true });
