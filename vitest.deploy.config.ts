import { defineConfig } from 'vitest/config';

// `pnpm test:deploy`: the project as it ships, which takes minutes, so it stays out of the default
// suite: the container built and run for real (deploy/container-check.mjs; most of it the image
// build), and every package packed and installed with npm (most of it the addon builds).
export default defineConfig({
  test: {
    include: ['deploy/test/container.test.ts', 'deploy/test/packages.test.ts'],
    testTimeout: 60 * 60_000,
    reporters: ['default'],
  },
});
