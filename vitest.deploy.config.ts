import { defineConfig } from 'vitest/config';

// `pnpm test:deploy`: the container built and run for real (deploy/container-check.mjs), which takes
// minutes (most of it the image build), so it stays out of the default suite.
export default defineConfig({
  test: {
    include: ['deploy/test/container.test.ts'],
    testTimeout: 60 * 60_000,
    reporters: ['default'],
  },
});
