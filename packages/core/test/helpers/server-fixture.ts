import { afterEach, expect } from 'vitest';
import { InferenceError, InferenceServer, type ModelIndexEntry, type ServerOptions } from '@tritium/core';
import { TempRepository, type TestModel } from './repository.js';
import { newProbe, testBackend } from './test-backend.js';

/**
 * The server and repository a test made, stopped and removed after each test. Tests
 * that build their own set `repo`/`server` so that they are cleaned up too.
 */
export interface ServerFixture {
  repo: TempRepository | undefined;
  server: InferenceServer | undefined;
  /** A repository holding `models`, served by the test backend. */
  start(models: Record<string, TestModel>, options?: Partial<ServerOptions>, probe?: ReturnType<typeof newProbe>): Promise<InferenceServer>;
}

export function useServerFixture(): ServerFixture {
  const fixture: ServerFixture = {
    repo: undefined,
    server: undefined,
    async start(models, options = {}, probe = newProbe()) {
      fixture.repo = await TempRepository.create(models);
      fixture.server = await InferenceServer.start({ modelRepository: fixture.repo.path, backends: [testBackend(probe)], ...options });
      return fixture.server;
    },
  };
  afterEach(async () => {
    await fixture.server?.stop();
    await fixture.repo?.remove();
    fixture.server = fixture.repo = undefined;
  });
  return fixture;
}

/** `name:version:state` per index row, for compact assertions. */
export const states = (index: ModelIndexEntry[]): string[] => index.map((e) => `${e.name}:${e.version ?? '-'}:${e.state}`);

/** The InferenceError a promise rejects with (failing the test if it resolves or throws something else). */
export async function rejection(promise: Promise<unknown>): Promise<InferenceError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(InferenceError);
  return error as InferenceError;
}
