import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests run against the TypeScript sources, so no build is needed first.
const source = (path: string) => fileURLToPath(new URL(`./packages/${path}`, import.meta.url));
const src = (pkg: string) => source(`${pkg}/src/index.ts`);

export default defineConfig({
  resolve: {
    // Exact matches: a string key would also match as a prefix (`@tritium/core/backend`
    // would become `…/core/src/index.ts/backend`).
    alias: [
      { find: /^@tritium\/core$/, replacement: src('core') },
      { find: /^@tritium\/core\/backend$/, replacement: source('core/src/backend-api.ts') },
      { find: /^@tritium\/batcher$/, replacement: src('batcher') },
      { find: /^@tritium\/backend-onnx$/, replacement: src('backend-onnx') },
      { find: /^@tritium\/backend-python$/, replacement: src('backend-python') },
      { find: /^@tritium\/backend-pytorch$/, replacement: src('backend-pytorch') },
      { find: /^@tritium\/backend-fil$/, replacement: src('backend-fil') },
      { find: /^@tritium\/backend-llamacpp$/, replacement: src('backend-llamacpp') },
      { find: /^@tritium\/frontend$/, replacement: src('frontend') },
    ],
  },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'examples/**/*.test.ts', 'deploy/test/manifests.test.ts'],
    testTimeout: 20000,
    // Suites that load many models start a worker thread (and onnxruntime in it) per session.
    hookTimeout: 60000,
    pool: 'forks',
    reporters: ['default', './scripts/long-file-reporter.ts', './scripts/summary-reporter.ts'],
  },
});
