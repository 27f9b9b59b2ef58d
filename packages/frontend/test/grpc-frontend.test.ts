import { createServer } from 'node:net';
import { status, type StatusObject } from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { modelConfigToJson } from '@tritium/core';
import { startGrpcFrontend } from '@tritium/frontend';
import { testConfig } from '../../core/test/helpers/repository.js';
import { GrpcClient, expectStatus, raw, useGrpcFixture, type Message } from './helpers/grpc-fixture.js';
import { SIMPLE } from './helpers/grpc-models.js';
import { useShmFile } from './helpers/grpc-shm.js';

const fx = useGrpcFixture();
const fp32Input = (values: number[]) => ({
  model_name: 'simple',
  inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [values.length] }],
  raw_input_contents: [raw(Float32Array.from(values))],
});

describe('health and metadata', () => {
  it('reports live and ready, and SERVING to the health check, then NOT_SERVING once the server stops', async () => {
    const client = await fx.start({ simple: SIMPLE });
    expect(await client.call('ServerLive')).toEqual({ live: true });
    expect(await client.call('ServerReady')).toEqual({ ready: true });
    expect(await client.check()).toEqual({ status: 'SERVING' });
    expect(await client.check('inference.GRPCInferenceService')).toEqual({ status: 'SERVING' });
    await fx.server!.stop();
    expect(await client.call('ServerReady')).toEqual({ ready: false });
    expect(await client.call('ServerLive')).toEqual({ live: false });
    expect(await client.check()).toEqual({ status: 'NOT_SERVING' });
  });

  it('answers server metadata with the extensions the frontend adds', async () => {
    const client = await fx.start({ simple: SIMPLE });
    const metadata = await client.call('ServerMetadata');
    expect(metadata.name).toBe('triton');
    expect(metadata.version).toBe(fx.server!.metadata().version);
    expect(metadata.extensions).toEqual(expect.arrayContaining(['model_repository', 'statistics', 'classification', 'sequence', 'system_shared_memory']));
  });

  it('answers model readiness and metadata, naming what is wrong with a bad request', async () => {
    const client = await fx.start({ simple: SIMPLE });
    expect(await client.call('ModelReady', { name: 'simple' })).toEqual({ ready: true });
    expect(await client.call('ModelReady', { name: 'simple', version: '1' })).toEqual({ ready: true });
    expect(await client.call('ModelReady', { name: 'simple', version: '2' })).toEqual({ ready: false });
    expect(await client.call('ModelReady', { name: 'nope' })).toEqual({ ready: false });
    expect(await client.call('ModelMetadata', { name: 'simple' })).toEqual({
      name: 'simple',
      versions: ['1'],
      platform: 'test',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: ['4'] }],
      outputs: [{ name: 'OUTPUT0', datatype: 'FP32', shape: ['4'] }],
    });
    await expectStatus(client.call('ModelMetadata', { name: 'nope' }), status.NOT_FOUND, /nope/);
    await expectStatus(client.call('ModelMetadata', { name: 'simple', version: 'one' }), status.INVALID_ARGUMENT, /version string 'one'/);
  });
});

describe('ModelConfig', () => {
  it("carries the config as Triton's ModelConfig message, 64-bit integers, enums, maps and oneofs included", async () => {
    const config = testConfig({
      maxBatchSize: 8,
      count: 2,
      extra: `dynamic_batching { max_queue_delay_microseconds: 100 priority_levels: 2 default_priority_level: 1
                 priority_queue_policy { key: 2 value { max_queue_size: 5 timeout_action: DELAY } } }
               version_policy { specific { versions: [ 1 ] } }
               model_warmup { name: "w" batch_size: 1 inputs { key: "INPUT0" value { data_type: TYPE_FP32 dims: [ 4 ] zero_data: true } } }`,
    });
    const client = await fx.start({ rich: { config } });
    const { config: received } = await client.call('ModelConfig', { name: 'rich' });
    // protobufjs, which this client decodes with, keys a uint64-keyed map by the key's 8 bytes: spelled out again here.
    const queues = Object.entries(received.dynamic_batching.priority_queue_policy);
    received.dynamic_batching.priority_queue_policy = Object.fromEntries(queues.map(([key, queue]) => [protobuf.util.longFromHash(key, true).toString(), queue]));
    expect(received.dynamic_batching.priority_queue_policy['2']).toMatchObject({ max_queue_size: 5, timeout_action: 'DELAY' });
    expect(received.input[0]).toMatchObject({ name: 'INPUT0', data_type: 'TYPE_FP32', dims: ['4'] });
    expect(received.instance_group[0]).toMatchObject({ count: 2, kind: 'KIND_CPU' });
    expect(received.scheduling_choice).toBe('dynamic_batching');
    expect(received.version_policy.specific.versions).toEqual(['1']);
    expect(received.parameters.behavior).toEqual({ string_value: 'identity' });
    expectSameValues(modelConfigToJson(await fx.server!.modelConfig('rich')), received, 'config');
  });

  it('refuses an unknown model or version', async () => {
    const client = await fx.start({ simple: SIMPLE });
    await expectStatus(client.call('ModelConfig', { name: 'nope' }), status.NOT_FOUND, /nope/);
    await expectStatus(client.call('ModelConfig', { name: 'simple', version: '3' }), status.NOT_FOUND, /version 3/);
  });
});

/** Every value of Triton's JSON form reached the client, at the same path (numbers and 64-bit strings compared as text). */
function expectSameValues(json: unknown, message: Message, path: string): void {
  if (Array.isArray(json)) {
    expect(message, path).toHaveLength(json.length);
    json.forEach((element, i) => expectSameValues(element, message[i], `${path}[${i}]`));
  } else if (typeof json === 'object' && json !== null) {
    for (const [key, value] of Object.entries(json)) expectSameValues(value, message?.[key], `${path}.${key}`);
  } else {
    expect(String(message), path).toBe(String(json));
  }
}

describe('ModelStatistics', () => {
  it("reports Triton's statistics for one model or all", async () => {
    const client = await fx.start({ simple: SIMPLE, other: SIMPLE });
    await client.call('ModelInfer', fp32Input([1, 2, 3, 4]));
    const { model_stats: stats } = await client.call('ModelStatistics', { name: 'simple' });
    expect(stats).toHaveLength(1);
    expect(stats[0]).toMatchObject({ name: 'simple', version: '1', inference_count: '1', execution_count: '1' });
    expect(stats[0].inference_stats.success.count).toBe('1');
    expect(Number(stats[0].inference_stats.success.ns)).toBeGreaterThan(0);
    expect(Number(stats[0].last_inference)).toBeGreaterThan(0);
    const all = await client.call('ModelStatistics', {});
    expect(all.model_stats.map((s: Message) => s.name).sort()).toEqual(['other', 'simple']);
    await expectStatus(client.call('ModelStatistics', { name: 'nope' }), status.NOT_FOUND, /nope/);
  });
});

describe('model repository', () => {
  const EXPLICIT = { modelControlMode: 'explicit' as const };

  it('lists the index, only ready models when asked', async () => {
    const client = await fx.start({ simple: SIMPLE, idle: SIMPLE }, { ...EXPLICIT, startupModels: ['simple'] });
    expect((await client.call('RepositoryIndex')).models).toEqual([
      { name: 'idle', version: '', state: 'UNAVAILABLE', reason: 'not loaded' },
      { name: 'simple', version: '1', state: 'READY', reason: expect.any(String) },
    ]);
    expect((await client.call('RepositoryIndex', { ready: true })).models.map((m: Message) => m.name)).toEqual(['simple']);
    await expectStatus(client.call('RepositoryIndex', { repository_name: 'other' }), status.UNIMPLEMENTED, /repository_name/);
  });

  it("loads a model with Triton's config parameter (JSON, either field spelling, 64-bit integers as strings), and unloads it", async () => {
    const client = await fx.start({ m: SIMPLE }, EXPLICIT);
    const config = {
      backend: 'test',
      maxBatchSize: 0,
      input: [{ name: 'INPUT0', data_type: 'TYPE_FP32', dims: ['2'] }],
      output: [{ name: 'OUTPUT0', dataType: 11, dims: [2] }],
      instance_group: [{ kind: 'KIND_CPU', count: 1 }],
      parameters: { behavior: { string_value: 'identity' } },
      response_cache: null,
    };
    await client.call('RepositoryModelLoad', { model_name: 'm', parameters: { config: { string_param: JSON.stringify(config) } } });
    expect((await client.call('ModelMetadata', { name: 'm' })).outputs).toEqual([{ name: 'OUTPUT0', datatype: 'FP32', shape: ['2'] }]);
    await client.call('RepositoryModelUnload', { model_name: 'm' });
    expect(await client.call('ModelReady', { name: 'm' })).toEqual({ ready: false });
    await client.call('RepositoryModelLoad', { model_name: 'm' });
    expect((await client.call('ModelMetadata', { name: 'm' })).inputs[0].shape).toEqual(['4']);
  });

  it('refuses load and unload parameters it cannot honour, saying which', async () => {
    const client = await fx.start({ m: SIMPLE }, EXPLICIT);
    const load = (parameters: object) => client.call('RepositoryModelLoad', { model_name: 'm', parameters });
    const unreadable = (detail: string) => new RegExp(`^failed to load 'm', failed to poll from model repository: Invalid config override: .*${detail}`);
    await expectStatus(load({ config: { string_param: '{"input": [' } }), status.INTERNAL, unreadable("'config' is not JSON"));
    await expectStatus(load({ config: { string_param: '{"inputs": []}' } }), status.INTERNAL, unreadable("config has no field 'inputs'"));
    await expectStatus(load({ config: { string_param: '{"input": [{"dims": {"a": 1}}]}' } }), status.INTERNAL, unreadable('does not fit a ModelConfig'));
    await expectStatus(load({ config: { bool_param: true } }), status.INVALID_ARGUMENT, /'config', expected string_param/);
    await expectStatus(load({ 'file:1/model.test': { bytes_param: Buffer.from('{}') } }), status.INTERNAL, /failed to poll from model repository: Load parameter 'config' must be specified for model file override$/);
    await expectStatus(load({ 'file:1/model.test': { string_param: '{}' } }), status.INVALID_ARGUMENT, /'file:1\/model.test', expected bytes_param/);
    await expectStatus(load({ colour: { string_param: 'red' } }), status.INVALID_ARGUMENT, /unrecognized load parameter 'colour'/);
    await expectStatus(
      client.call('RepositoryModelUnload', { model_name: 'm', parameters: { unload_dependents: { string_param: 'yes' } } }),
      status.INVALID_ARGUMENT,
      /'unload_dependents', expected bool_param/,
    );
    await expectStatus(
      client.call('RepositoryModelLoad', { model_name: 'absent' }),
      status.INTERNAL,
      /^failed to load 'absent', failed to poll from model repository: model 'absent' is not in the model repository$/,
    );
  });

  it('refuses loading outside explicit mode', async () => {
    const client = await fx.start({ m: SIMPLE });
    await expectStatus(client.call('RepositoryModelLoad', { model_name: 'm' }), status.UNAVAILABLE, /^explicit model load \/ unload is not allowed if polling is enabled/);
  });
});

describe('shared memory control', () => {
  const shm = useShmFile();
  const ALLOW_SHM = { allowClientSharedMemory: true };

  it('registers, lists and unregisters system shared-memory regions, shared by every frontend of the server', async () => {
    const client = await fx.start({ simple: SIMPLE }, {}, ALLOW_SHM);
    const key = await shm.create(64);
    await client.call('SystemSharedMemoryRegister', { name: 'r', key: `/${key}`, offset: 16, byte_size: 32 });
    const region = { name: 'r', key: `/${key}`, offset: '16', byte_size: '32' };
    expect(await client.call('SystemSharedMemoryStatus')).toEqual({ regions: { r: region } });
    expect(await client.call('SystemSharedMemoryStatus', { name: 'r' })).toEqual({ regions: { r: region } });
    await expectStatus(client.call('SystemSharedMemoryRegister', { name: 'r', key: `/${key}`, byte_size: 8 }), status.ALREADY_EXISTS, /^shared memory region 'r' already in manager$/);
    await expectStatus(client.call('SystemSharedMemoryRegister', { name: 's', key: `/${key}`, byte_size: 128 }), status.INVALID_ARGUMENT, /^failed to register shared memory region 's': invalid args \(offset 0 \+ byte_size 128 exceeds the 64 bytes/);
    // Triton's python_grpc_aio_test matches "[StatusCode.INTERNAL] Unable to open shared memory region: '/test_shm'".
    await expectStatus(client.call('SystemSharedMemoryRegister', { name: 't', key: '/tritium-no-such-shm', byte_size: 0 }), status.INTERNAL, /^Unable to open shared memory region: '\/tritium-no-such-shm': ENOENT/);
    await expectStatus(client.call('SystemSharedMemoryStatus', { name: 's' }), status.NOT_FOUND, /^Unable to find system shared memory region: 's'$/);

    const second = await startGrpcFrontend(fx.server!, { host: '127.0.0.1', port: 0 });
    const other = new GrpcClient(second.port);
    try {
      expect(await other.call('SystemSharedMemoryStatus')).toEqual({ regions: { r: region } });
    } finally {
      other.close();
      await second.close();
    }
    // The first frontend still holds the registry: closing the second unregistered nothing.
    expect(await client.call('SystemSharedMemoryStatus')).toEqual({ regions: { r: region } });
    await client.call('SystemSharedMemoryUnregister', { name: 'r' });
    await client.call('SystemSharedMemoryUnregister', { name: 'never-registered' });
    expect(await client.call('SystemSharedMemoryStatus')).toEqual({ regions: {} });
  });

  it('unregisters every region once its last frontend closes', async () => {
    await fx.start({ simple: SIMPLE }, {}, ALLOW_SHM);
    await fx.client.call('SystemSharedMemoryRegister', { name: 'a', key: await shm.create(8), byte_size: 8 });
    await fx.frontend!.close();
    const again = await startGrpcFrontend(fx.server!, { host: '127.0.0.1', port: 0 });
    const client = new GrpcClient(again.port);
    try {
      expect(await client.call('SystemSharedMemoryStatus')).toEqual({ regions: {} });
    } finally {
      client.close();
      await again.close();
    }
  });

  it('answers the CUDA shared-memory rpcs as a Triton built without them', async () => {
    const client = await fx.start({ simple: SIMPLE }, {}, ALLOW_SHM);
    expect(await client.call('CudaSharedMemoryStatus')).toEqual({ regions: {} });
    await expectStatus(client.call('CudaSharedMemoryStatus', { name: 'g' }), status.NOT_FOUND, /^Unable to find cuda shared memory region: 'g'$/);
    // Triton's python_grpc_aio_test (run on GPU builds) matches "failed to register shared memory region.*invalid args".
    await expectStatus(client.call('CudaSharedMemoryRegister', { name: 'g', byte_size: 8 }), status.INVALID_ARGUMENT, /^failed to register shared memory region 'g': invalid args \(CUDA shared memory: GPUs not supported\)$/);
    expect(await client.call('CudaSharedMemoryUnregister', { name: 'g' })).toEqual({});
  });
});

describe('starting and closing', () => {
  it('refuses bad options and a port in use, saying which', async () => {
    await fx.start({ simple: SIMPLE });
    await expect(startGrpcFrontend(fx.server!, { port: -1 })).rejects.toThrow(/`port` must be an integer from 0 to 65535/);
    await expect(startGrpcFrontend(fx.server!, { port: 0, maxReceiveMessageBytes: 0 })).rejects.toThrow(/`maxReceiveMessageBytes`/);
    await expect(startGrpcFrontend(fx.server!, { port: 0, maxSendMessageBytes: 2 ** 31 })).rejects.toThrow(/`maxSendMessageBytes`/);
    await expect(startGrpcFrontend(fx.server!, { host: '127.0.0.1', port: fx.frontend!.port })).rejects.toThrow(/cannot listen on 127.0.0.1:\d+/);
  });

  it('listens on the port asked for', async () => {
    await fx.start({ simple: SIMPLE });
    const port = await freePort();
    const frontend = await startGrpcFrontend(fx.server!, { host: '127.0.0.1', port });
    const client = new GrpcClient(port);
    try {
      expect(frontend.port).toBe(port);
      expect(await client.call('ServerLive')).toEqual({ live: true });
    } finally {
      client.close();
      await frontend.close();
    }
  });

  it('lets a call in flight finish when closing, and takes no new ones', async () => {
    const client = await fx.start({ simple: SIMPLE });
    const slow = client.call('ModelInfer', { ...fp32Input([1, 2, 3, 4]), parameters: { delay_ms: { int64_param: 300 } } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closed = fx.frontend!.close();
    const response = await slow;
    expect(new Float32Array(Uint8Array.from(response.raw_output_contents[0]).buffer)).toEqual(Float32Array.from([1, 2, 3, 4]));
    await closed;
    await expectStatus(client.call('ServerLive'), status.UNAVAILABLE, /.*/);
  });

  it("answers new requests on a stream left open during close with Triton's UNAVAILABLE, and lets those in flight finish", async () => {
    const client = await fx.start({ simple: SIMPLE }, {}, { closeTimeoutMs: 10_000 });
    const stream = client.stream();
    const messages: Message[] = [];
    stream.on('data', (message: Message) => messages.push(message));
    const ended = new Promise<StatusObject>((resolve) => stream.on('status', resolve));
    stream.write({ ...fp32Input([1, 2, 3, 4]), id: 'before', parameters: { delay_ms: { int64_param: 400 } } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closed = fx.frontend!.close();
    stream.write({ ...fp32Input([1, 2, 3, 4]), id: 'during' });
    stream.end();
    expect((await ended).code).toBe(status.OK);
    await closed;
    expect(messages.map((m) => [m.infer_response.id, m.error_message])).toEqual([
      ['before', ''],
      ['during', 'GRPC server is shutting down and has stopped accepting new requests.'],
    ]);
  });

  it('cuts off a stream left open after closeTimeoutMs, cancelling its requests', async () => {
    const client = await fx.start({ simple: SIMPLE }, {}, { closeTimeoutMs: 300 });
    const stream = client.stream();
    const ended = new Promise<unknown>((resolve) => stream.on('error', resolve).on('end', resolve));
    stream.write({ ...fp32Input([1, 2, 3, 4]), parameters: { delay_ms: { int64_param: 2_000 } } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    await fx.frontend!.close();
    const took = performance.now() - started;
    // It waited for the timeout (less a timer's rounding), not for the request, which needs 2 s.
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(1_500);
    await ended;
    await expect.poll(() => fx.server!.statistics('simple').model_stats[0]!.inference_stats.fail.count).toBe(1);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
    probe.on('error', reject);
  });
}
