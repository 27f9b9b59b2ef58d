import { afterEach, describe, expect, it } from 'vitest';
import { startGrpcFrontend } from '@tritium/frontend';
import type { RunningFrontend } from '../src/listen.js';
import { GrpcClient } from './helpers/grpc-fixture.js';
import { startHttpFixture, type HttpFixture } from './helpers/http-fixture.js';
import { simpleModel } from './helpers/http-models.js';

let fx: HttpFixture | undefined;
let grpc: RunningFrontend | undefined;
let client: GrpcClient | undefined;
afterEach(async () => {
  client?.close();
  await grpc?.close();
  await fx?.stop();
  fx = grpc = client = undefined;
});

describe('server metadata', () => {
  it("lists the same extensions over HTTP and gRPC, each once, the server's own among them, as Triton does", async () => {
    fx = await startHttpFixture({ simple: simpleModel });
    grpc = await startGrpcFrontend(fx.server, { host: '127.0.0.1', port: 0 });
    client = new GrpcClient(grpc.port);
    const overHttp = ((await (await fetch(`${fx.url}/v2`)).json()) as { extensions: string[] }).extensions;
    const overGrpc = ((await client.call('ServerMetadata')) as { extensions: string[] }).extensions;
    expect(overGrpc).toEqual(overHttp);
    expect(new Set(overHttp).size).toBe(overHttp.length);
    expect(overHttp).toEqual(expect.arrayContaining([...fx.server.metadata().extensions, 'binary_tensor_data', 'classification', 'sequence', 'system_shared_memory', 'parameters', 'schedule_policy', 'model_repository(unload_dependents)']));
    expect(overHttp).not.toContain('cuda_shared_memory');
  });
});
