import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  external: ["onnxruntime-node", "onnxruntime-web", "@tritium/core"],
  clean: true,
  sourcemap: true,
  target: 'node20',
});
