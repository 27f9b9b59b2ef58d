import { packageConfig } from '../../tsup.base.js';

// The CommonJS build finds build/Release/shared_memory.node through import.meta.url too.
// @tritium/native-addon (plain ESM) is bundled in, so the CommonJS build needs no require() of ESM;
// it stays a dependency for the install script.
export default packageConfig({ external: ['@tritium/core'], noExternal: ['@tritium/native-addon'], shims: true });
