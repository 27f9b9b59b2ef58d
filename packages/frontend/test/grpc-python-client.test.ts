import { execFile, execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from '../../core/test/helpers/repository.js';
import { useGrpcFixture } from './helpers/grpc-fixture.js';
import { REPEAT } from './helpers/grpc-models.js';
import { REFERENCE_PROTOS, referenceMissing } from './helpers/grpc-reference.js';

/** Why Triton's Python stubs cannot be made here (no python3, grpcio or grpcio-tools), or undefined when they can. */
const pythonMissing: string | undefined = (() => {
  try {
    execFileSync('python3', ['-c', 'import grpc, grpc_tools.protoc'], { stdio: 'ignore' });
    return referenceMissing;
  } catch {
    return 'python3 with grpcio and grpcio-tools is not available';
  }
})();
if (pythonMissing) console.warn(`skipping the Python gRPC client test: ${pythonMissing}`);

const CLIENT = fileURLToPath(new URL('./helpers/grpc-python-client.py', import.meta.url));
const fx = useGrpcFixture();

describe.skipIf(pythonMissing)("a Python client built from Triton's own protos", () => {
  let stubs: string;
  beforeAll(async () => {
    stubs = await mkdtemp(join(tmpdir(), 'tritium-grpc-python-'));
    const protos = ['grpc_service.proto', 'model_config.proto', 'health.proto'];
    await promisify(execFile)('python3', ['-m', 'grpc_tools.protoc', `-I${REFERENCE_PROTOS}`, `--python_out=${stubs}`, `--grpc_python_out=${stubs}`, ...protos]);
  });
  afterAll(async () => {
    await rm(stubs, { recursive: true, force: true });
  });

  it('talks to the frontend: liveness, health, metadata, config, ModelInfer, ModelStreamInfer', async () => {
    const simple = testConfig({ maxBatchSize: 4, extra: 'dynamic_batching { priority_levels: 3 default_priority_level: 1 priority_queue_policy { key: 3 value { max_queue_size: 6 } } }' });
    await fx.start({ simple: { config: simple }, repeat: REPEAT });
    // Asynchronous, so that this process goes on serving the client.
    const { stdout } = await promisify(execFile)('python3', [CLIENT, stubs, String(fx.frontend!.port)], { timeout: 30_000 });
    const { stream, ...seen } = JSON.parse(stdout);
    expect(seen).toEqual({
      live: true,
      health: 'SERVING',
      metadata: { name: 'simple', inputs: [['INPUT0', 'FP32', [-1, 4]]] },
      config: { max_batch_size: 4, dims: [4], priority_queue_policy: { '3': 6 }, kind: 2 },
      infer: { id: 'py-1', model_version: '1', outputs: [['OUTPUT0', 'FP32', [1, 4]]], values: [1.5, 2.5, 3.5, 4.5] },
      decoupled_infer: ['UNIMPLEMENTED', expect.stringMatching(/ModelInfer RPC doesn't support models with decoupled transaction policy/)],
    });
    // The failing request is answered at once; the decoupled one's responses come in their order.
    const of = (id: string) => stream.filter((message: { id: string }) => message.id === id);
    expect(stream).toHaveLength(4);
    expect(of('py-stream')).toEqual([
      { error: '', id: 'py-stream', final: false, values: [7] },
      { error: '', id: 'py-stream', final: false, values: [7] },
      { error: '', id: 'py-stream', final: true, values: [] },
    ]);
    expect(of('py-error')).toEqual([{ error: expect.stringMatching(/'nope'/), id: 'py-error', final: true, values: [] }]);
  });
});
