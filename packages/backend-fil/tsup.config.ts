import { copyFile } from 'node:fs/promises';
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  external: ['@tritium/core'],
  clean: true,
  sourcemap: true,
  target: 'node20',
  // The CommonJS build finds forest-worker.mjs through import.meta.url too.
  shims: true,
  // The worker script is plain JavaScript, started by path: it ships as it is, next to the bundle, with the loop it runs.
  onSuccess: async () => {
    await copyFile('src/forest-worker.mjs', 'dist/forest-worker.mjs');
    await copyFile('src/forest-walk.mjs', 'dist/forest-walk.mjs');
  },
});
