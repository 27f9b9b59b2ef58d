import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests run against the TypeScript sources, so no build is needed first.
const src = (pkg: string) => fileURLToPath(new URL(`./packages/${pkg}/src/index.ts`, import.meta.url));

export default defineConfig({
  resolve: {
    alias: {
      '@tritium/core': src('core'),
      '@tritium/batcher': src('batcher'),
      '@tritium/backend-onnx': src('backend-onnx'),
      '@tritium/backend-python': src('backend-python'),
      '@tritium/backend-pytorch': src('backend-pytorch'),
      '@tritium/backend-fil': src('backend-fil'),
      '@tritium/frontend': src('frontend'),
    },
  },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'examples/**/*.test.ts'],
    testTimeout: 20000,
    // Suites that load many models start a worker thread (and onnxruntime in it) per session.
    hookTimeout: 60000,
    pool: 'forks',
    reporters: ['default', './scripts/summary-reporter.ts'],
  },
});
