import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, vi } from 'vitest';
import { InferenceServer, type ServerOptions } from '@tritium/core';
import { newProbe, testBackend } from './test-backend.js';

/** What an object-storage test made: undone after each test, last first, once its environment stubs are. */
export interface ObjectStorageFixture {
  readonly cleanups: (() => Promise<unknown>)[];
  /** A temporary directory, removed after the test. */
  tempDirectory(): Promise<string>;
  /** A server of the test backend, its object-storage cache in a temporary directory unless `options` names one. */
  serve(modelRepository: string | string[], options?: Partial<ServerOptions>, probe?: ReturnType<typeof newProbe>): Promise<InferenceServer>;
}

/** `directoryPrefix` names the temporary directories, so that a leftover tells which suite left it. */
export function useObjectStorageFixture(directoryPrefix: string): ObjectStorageFixture {
  const cleanups: (() => Promise<unknown>)[] = [];
  const fixture: ObjectStorageFixture = {
    cleanups,
    async tempDirectory() {
      const directory = await mkdtemp(join(tmpdir(), directoryPrefix));
      cleanups.push(() => rm(directory, { recursive: true, force: true }));
      return directory;
    },
    async serve(modelRepository, options = {}, probe = newProbe()) {
      const cacheDirectory = options.objectStorage?.cacheDirectory ?? (await fixture.tempDirectory());
      const server = await InferenceServer.start({ modelRepository, backends: [testBackend(probe)], ...options, objectStorage: { ...options.objectStorage, cacheDirectory } });
      cleanups.push(() => server.stop());
      return server;
    },
  };
  afterEach(async () => {
    vi.unstubAllEnvs();
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return fixture;
}
