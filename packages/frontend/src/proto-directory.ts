import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The package's proto/ folder: one level above this source file (src/) or the bundle
 * that holds it (dist/index.js, ESM or CJS, where tsup's shims give import.meta.url), or
 * two above a bundle in a folder of its own (dist/cli/).
 */
export function protoDirectory(): string {
  for (const relative of ['../proto/', '../../proto/']) {
    const directory = fileURLToPath(new URL(relative, import.meta.url));
    if (existsSync(`${directory}grpc_service.proto`)) return directory;
  }
  throw new Error(`@tritium/frontend: its proto/ folder is missing (looked beside ${fileURLToPath(import.meta.url)})`);
}
