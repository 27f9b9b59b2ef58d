import { copyFile } from 'node:fs/promises';
import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  external: ["onnxruntime-node", "onnxruntime-web", "@tritium/core"],
  clean: true,
  sourcemap: true,
  target: 'node20',
  // The CommonJS build finds session-worker.mjs through import.meta.url too.
  shims: true,
  // The worker script is plain JavaScript, started by path: it ships as it is, next to the bundle.
  onSuccess: async () => copyFile('src/session-worker.mjs', 'dist/session-worker.mjs'),
});
