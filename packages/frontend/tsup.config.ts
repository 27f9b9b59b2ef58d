import { packageConfig } from '../../tsup.base.js';

// The CommonJS build finds proto/ through import.meta.url too.
export default packageConfig({ entry: ['src/index.ts', 'src/cli/main.ts'], external: ['@tritium/core'], shims: true });
