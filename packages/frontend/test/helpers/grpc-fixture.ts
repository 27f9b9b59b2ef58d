import { fileURLToPath } from 'node:url';
import { credentials, loadPackageDefinition, type Client, type ClientDuplexStream, type ServiceError } from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { afterEach, expect } from 'vitest';
import { InferenceServer, type ServerOptions } from '@tritium/core';
import { startGrpcFrontend, type GrpcFrontendOptions, type RunningFrontend } from '@tritium/frontend';
import { TempRepository, type TestModel } from '../../../core/test/helpers/repository.js';
import { newProbe, testBackend, type TestBackendProbe } from '../../../core/test/helpers/test-backend.js';

/** Messages as a client decodes them with the frontend's own protos: defaults filled in, 64-bit integers as strings. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Message = any;

const PROTOS = fileURLToPath(new URL('../../proto/', import.meta.url));
const packages = loadPackageDefinition(
  loadSync(['grpc_service.proto', 'health.proto'], { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true, includeDirs: [PROTOS] }),
) as Message;

/** A @grpc/grpc-js client of both services, with promises for the unary rpcs. */
export class GrpcClient {
  readonly inference: RpcClient & { ModelStreamInfer(): ClientDuplexStream<Message, Message> };
  readonly health: RpcClient;

  constructor(port: number) {
    this.inference = new packages.inference.GRPCInferenceService(`127.0.0.1:${port}`, credentials.createInsecure());
    this.health = new packages.grpc.health.v1.Health(`127.0.0.1:${port}`, credentials.createInsecure());
  }

  call(method: string, request: object = {}): Promise<Message> {
    return unaryCall(this.inference, method, request);
  }

  check(service = ''): Promise<Message> {
    return unaryCall(this.health, 'Check', { service });
  }

  stream(): ClientDuplexStream<Message, Message> {
    return this.inference.ModelStreamInfer();
  }

  close(): void {
    this.inference.close();
    this.health.close();
  }
}

/** A client made by loadPackageDefinition: one method per rpc of its service. */
export type RpcClient = Client & Record<string, Function | undefined>;

function unaryCall(client: RpcClient, method: string, request: object): Promise<Message> {
  const rpc = client[method];
  if (rpc === undefined) return Promise.reject(new Error(`the client has no rpc '${method}'`));
  return new Promise((resolve, reject) => rpc.call(client, request, (error: ServiceError | null, response: Message) => (error ? reject(error) : resolve(response))));
}

/** The error a call fails with, checked for its gRPC status code and message. */
export async function expectStatus(promise: Promise<unknown>, code: number, details: string | RegExp): Promise<ServiceError> {
  const error = (await promise.then(
    () => undefined,
    (e: unknown) => e,
  )) as ServiceError | undefined;
  expect(error, 'the call should have failed').toBeDefined();
  expect({ code: error!.code, details: error!.details }).toEqual({ code, details: expect.stringMatching(details) });
  return error!;
}

/** A typed array's bytes, as raw tensor contents. */
export const raw = (data: ArrayBufferView) => Buffer.from(data.buffer, data.byteOffset, data.byteLength);

export interface GrpcFixture {
  repo: TempRepository | undefined;
  server: InferenceServer | undefined;
  frontend: RunningFrontend | undefined;
  client: GrpcClient;
  probe: TestBackendProbe;
  /** A repository of `models` on the test backend, served over gRPC on a free port of 127.0.0.1. */
  start(models: Record<string, TestModel>, options?: Partial<ServerOptions>, frontendOptions?: GrpcFrontendOptions): Promise<GrpcClient>;
}

/** The server, frontend, client and repository a test made, all closed and removed after each test. */
export function useGrpcFixture(): GrpcFixture {
  let client: GrpcClient | undefined;
  const fixture: GrpcFixture = {
    repo: undefined,
    server: undefined,
    frontend: undefined,
    probe: newProbe(),
    get client() {
      return client!;
    },
    async start(models, options = {}, frontendOptions = {}) {
      fixture.probe = newProbe();
      fixture.repo = await TempRepository.create(models);
      fixture.server = await InferenceServer.start({ modelRepository: fixture.repo.path, backends: [testBackend(fixture.probe)], ...options });
      fixture.frontend = await startGrpcFrontend(fixture.server, { host: '127.0.0.1', port: 0, ...frontendOptions });
      return (client = new GrpcClient(fixture.frontend.port));
    },
  };
  afterEach(async () => {
    client?.close();
    await fixture.frontend?.close();
    await fixture.server?.stop();
    await fixture.repo?.remove();
    client = fixture.frontend = fixture.server = fixture.repo = undefined;
  });
  return fixture;
}
