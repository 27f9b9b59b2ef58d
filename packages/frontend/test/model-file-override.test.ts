import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { InferenceServer } from '@tritium/core';
import { onnxBackend } from '@tritium/backend-onnx';
import { startGrpcFrontend, type RunningFrontend } from '@tritium/frontend';
import { TempRepository } from '../../core/test/helpers/repository.js';
import { expectStatus, GrpcClient, raw } from './helpers/grpc-fixture.js';
import { startHttpFixture, type HttpFixture } from './helpers/http-fixture.js';

// Triton's load with model file override: the model's files travel with the load request
// (HTTP: base64 text, gRPC: bytes_param) and the repository need not have the model.
const TINY = readFileSync(fileURLToPath(new URL('../../backend-onnx/models/tiny.onnx', import.meta.url)));
/** tiny.onnx: OUTPUT0 = INPUT0 + 1, FP32 [batch, 1]. */
const CONFIG = JSON.stringify({
  backend: 'onnxruntime',
  max_batch_size: 8,
  input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: [1] }],
  output: [{ name: 'OUTPUT0', data_type: 'TYPE_FP32', dims: [1] }],
});

describe('model file override over HTTP', () => {
  let fx: HttpFixture | undefined;
  afterEach(() => fx?.stop());

  it('loads a model from base64 files and a JSON config, and serves it', async () => {
    fx = await startHttpFixture({}, { backends: [onnxBackend()], server: { modelControlMode: 'explicit' } });
    const body = { parameters: { config: CONFIG, 'file:1/model.onnx': TINY.toString('base64') } };
    const load = await fetch(`${fx.url}/v2/repository/models/tiny/load`, { method: 'POST', body: JSON.stringify(body) });
    expect(load.status, await load.clone().text()).toBe(200);

    const infer = await fetch(`${fx.url}/v2/models/tiny/infer`, {
      method: 'POST',
      body: JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [2, 1], data: [1, 2] }] }),
    });
    expect(((await infer.json()) as { outputs: Array<{ data: number[] }> }).outputs[0]!.data).toEqual([2, 3]);
  });
});

describe('model file override over gRPC', () => {
  let server: InferenceServer | undefined;
  let frontend: RunningFrontend | undefined;
  let client: GrpcClient | undefined;
  let repository: TempRepository | undefined;
  afterEach(async () => {
    client?.close();
    await frontend?.close();
    await server?.stop();
    await repository?.remove();
    client = frontend = server = repository = undefined;
  });

  it("loads a model from bytes_param files and serves it; a file name past NAME_MAX fails as Triton's client example expects", async () => {
    repository = await TempRepository.create({});
    server = await InferenceServer.start({ modelRepository: repository.path, backends: [onnxBackend()], modelControlMode: 'explicit' });
    frontend = await startGrpcFrontend(server, { host: '127.0.0.1', port: 0 });
    client = new GrpcClient(frontend.port);
    await client.call('RepositoryModelLoad', { model_name: 'tiny', parameters: { config: { string_param: CONFIG }, 'file:1/model.onnx': { bytes_param: TINY } } });

    const infer = () =>
      client!.call('ModelInfer', { model_name: 'tiny', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [1, 1] }], raw_input_contents: [raw(Float32Array.of(41))] });
    const output = (await infer()).raw_output_contents[0] as Buffer;
    expect(output.readFloatLE(0)).toBe(42);

    // As simple_grpc_model_control.py sends it.
    const tooLong = { config: { string_param: '{}' }, [`file:${'A'.repeat(256)}`]: { bytes_param: Buffer.from('a') } };
    await expectStatus(client.call('RepositoryModelLoad', { model_name: 'tiny', parameters: tooLong }), status.INTERNAL, /failed to poll from model repository/);
    expect(await client.call('ModelReady', { name: 'tiny' })).toEqual({ ready: true });
    expect((await infer()).raw_output_contents).toHaveLength(1);
  });
});
