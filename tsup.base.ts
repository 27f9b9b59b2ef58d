import { copyFile } from 'node:fs/promises';
import { defineConfig, type Options } from 'tsup';

/**
 * Every package's build: ESM + CJS with type declarations from src/index.ts, for Node 20.
 * `files` are plain scripts started by path (worker threads): they ship as they are, next
 * to the bundle. Packages that find files through import.meta.url set `shims` so the
 * CommonJS build finds them too.
 */
export function packageConfig({ files = [], ...options }: Options & { files?: readonly string[] } = {}) {
  return defineConfig({
    entry: ['src/index.ts'],
    format: ['esm', 'cjs'],
    dts: true,
    clean: true,
    sourcemap: true,
    target: 'node20',
    ...(files.length > 0 && { onSuccess: async () => void (await Promise.all(files.map((file) => copyFile(`src/${file}`, `dist/${file}`)))) }),
    ...options,
  });
}
