import { defineConfig } from 'tsup';

export default defineConfig({
  entry: ['src/index.ts'],
  format: ['esm', 'cjs'],
  dts: true,
  external: ['@tritium/core'],
  clean: true,
  sourcemap: true,
  target: 'node20',
});
