import { packageConfig } from '../../tsup.base.js';

// Two faces: `@tritium/core` (index) for applications, `@tritium/core/backend` for backend
// authors. Splitting (for CJS too) puts what both export in shared chunks, so each value
// (InferenceError, the helpers) is one object whichever face, and whichever format, loads it.
export default packageConfig({ entry: { index: 'src/index.ts', backend: 'src/backend-api.ts' }, splitting: true });
