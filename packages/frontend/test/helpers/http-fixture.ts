import { InferenceServer, type Backend, type ServerOptions } from '@tritium/core';
import { startHttpFrontend, type HttpFrontendOptions } from '@tritium/frontend';
import type { RunningFrontend } from '../../src/listen.js';
import { TempRepository, type TestModel } from '../../../core/test/helpers/repository.js';
import { newProbe, testBackend, type TestBackendProbe } from '../../../core/test/helpers/test-backend.js';

/** A server on a temporary repository, served by the HTTP frontend on 127.0.0.1 (any free port). */
export interface HttpFixture {
  readonly server: InferenceServer;
  readonly frontend: RunningFrontend;
  readonly repository: TempRepository;
  readonly probe: TestBackendProbe;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Closes the frontend, stops the server and removes the repository. */
  stop(): Promise<void>;
}

export interface HttpFixtureOptions {
  readonly server?: Partial<ServerOptions>;
  readonly frontend?: HttpFrontendOptions;
  /** Backends besides core's test backend. */
  readonly backends?: readonly Backend[];
  /** Runs once the repository is written, before the server reads it (to add label files, say). */
  readonly prepare?: (repository: TempRepository) => Promise<void>;
}

export async function startHttpFixture(models: Record<string, TestModel>, options: HttpFixtureOptions = {}): Promise<HttpFixture> {
  const repository = await TempRepository.create(models);
  await options.prepare?.(repository);
  const probe = newProbe();
  const server = await InferenceServer.start({
    modelRepository: repository.path,
    backends: [testBackend(probe), ...(options.backends ?? [])],
    ...options.server,
  });
  const frontend = await startHttpFrontend(server, { host: '127.0.0.1', port: 0, ...options.frontend });
  return {
    server,
    frontend,
    repository,
    probe,
    url: `http://127.0.0.1:${frontend.port}`,
    async stop() {
      await frontend.close();
      await server.stop();
      await repository.remove();
    },
  };
}
