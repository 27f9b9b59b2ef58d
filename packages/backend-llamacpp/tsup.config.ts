import { packageConfig } from '../../tsup.base.js';

export default packageConfig({ external: ['@tritium/core', 'node-llama-cpp'] });
