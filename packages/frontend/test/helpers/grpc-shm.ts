import { randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { afterEach } from 'vitest';

/**
 * Shared-memory regions as a client makes them (shm_open creates a file in /dev/shm),
 * each removed after the test.
 */
export function useShmFile() {
  const made: string[] = [];
  afterEach(async () => {
    await Promise.all(made.splice(0).map((key) => rm(`/dev/shm/${key}`, { force: true })));
  });
  return {
    /** A new region of `size` zero bytes, or holding `bytes`; returns its key (without the leading '/'). */
    async create(size: number, bytes?: Uint8Array): Promise<string> {
      const key = `tritium-grpc-test-${process.pid}-${randomBytes(4).toString('hex')}`;
      made.push(key);
      const content = new Uint8Array(size);
      if (bytes) content.set(bytes);
      await writeFile(`/dev/shm/${key}`, content);
      return key;
    },
    async read(key: string): Promise<Buffer> {
      return readFile(`/dev/shm/${key}`);
    },
  };
}
