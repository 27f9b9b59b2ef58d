import { once } from 'node:events';
import { closeSync, ftruncateSync, mkdtempSync, openSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { expectStatus, raw, useGrpcFixture, type Message } from './helpers/grpc-fixture.js';
import { SIMPLE } from './helpers/grpc-models.js';
import { useShmFile } from './helpers/grpc-shm.js';

const fx = useGrpcFixture();
const shm = useShmFile();
const ALLOW_SHM = { allowClientSharedMemory: true };
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

const region = (name: string, byteSize: number) => ({ shared_memory_region: { string_param: name }, shared_memory_byte_size: { int64_param: byteSize } });
const values = (bytes: Buffer) => Array.from(new Float32Array(Uint8Array.from(bytes).buffer));

describe('gRPC system shared memory, against a hostile client', () => {
  it('refuses to register or unregister regions unless allowed (--allow-client-shm), and still reports them', async () => {
    const client = await fx.start({ simple: SIMPLE });
    const disabled = /^Client shared memory is disabled\. Start the server with '--allow-client-shm=true' to enable\.$/;
    await expectStatus(client.call('SystemSharedMemoryRegister', { name: 'r', key: await shm.create(8), byte_size: 8 }), status.UNIMPLEMENTED, disabled);
    await expectStatus(client.call('SystemSharedMemoryUnregister', {}), status.UNIMPLEMENTED, disabled);
    await expectStatus(client.call('CudaSharedMemoryRegister', { name: 'g', byte_size: 8 }), status.UNIMPLEMENTED, disabled);
    await expectStatus(client.call('CudaSharedMemoryUnregister', {}), status.UNIMPLEMENTED, disabled);
    expect(await client.call('SystemSharedMemoryStatus')).toEqual({ regions: {} });
  });

  it('refuses a key that is a symbolic link', async () => {
    const client = await fx.start({ simple: SIMPLE }, {}, ALLOW_SHM);
    const dir = mkdtempSync(join(tmpdir(), 'tritium-shm-victim-'));
    const link = `tritium-grpc-test-link-${process.pid}`;
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }), () => rmSync(`/dev/shm/${link}`, { force: true }));
    writeFileSync(join(dir, 'secret'), 'root:x:0:0');
    symlinkSync(join(dir, 'secret'), `/dev/shm/${link}`);
    await expectStatus(client.call('SystemSharedMemoryRegister', { name: 'evil', key: link, byte_size: 4 }), status.INTERNAL, /^Unable to open shared memory region: '.*': it is a symbolic link$/);
  });

  it('refuses regions beyond maxSharedMemoryRegions with RESOURCE_EXHAUSTED', async () => {
    const client = await fx.start({ simple: SIMPLE }, {}, { ...ALLOW_SHM, maxSharedMemoryRegions: 2 });
    const key = await shm.create(8);
    await client.call('SystemSharedMemoryRegister', { name: 'a', key, byte_size: 8 });
    await client.call('SystemSharedMemoryRegister', { name: 'b', key, byte_size: 8 });
    await expectStatus(client.call('SystemSharedMemoryRegister', { name: 'c', key, byte_size: 8 }), status.RESOURCE_EXHAUSTED, /the server holds 2 regions, its limit \(maxSharedMemoryRegions 2\)/);
    await client.call('SystemSharedMemoryUnregister', { name: 'a' });
    await client.call('SystemSharedMemoryRegister', { name: 'c', key, byte_size: 8 });
  });

  it('refuses an input whose region byte size does not fit its shape, without reading the region', async () => {
    const client = await fx.start({ simple: SIMPLE }, {}, ALLOW_SHM);
    const gib = 2 ** 30;
    const key = await shm.create(0);
    const fd = openSync(`/dev/shm/${key}`, 'r+');
    ftruncateSync(fd, gib);
    closeSync(fd);
    await client.call('SystemSharedMemoryRegister', { name: 'big', key, byte_size: gib });
    const rss = process.memoryUsage().rss;
    const started = performance.now();
    await expectStatus(
      client.call('ModelInfer', { model_name: 'simple', inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], parameters: region('big', gib) }] }),
      status.INVALID_ARGUMENT,
      /^input 'INPUT0': shared_memory_byte_size 1073741824 does not match FP32 of shape \[4\], which needs 16 bytes$/,
    );
    expect(performance.now() - started).toBeLessThan(1000);
    expect(process.memoryUsage().rss - rss).toBeLessThan(64 * 1024 * 1024);
  });

  /** A slow request writing OUTPUT0 to region 'out', during which 'out' is unregistered and registered again on another key. */
  async function reregisterDuring(send: (request: Message) => Promise<void>): Promise<void> {
    const client = fx.client;
    const first = await shm.create(16);
    const second = await shm.create(16);
    await client.call('SystemSharedMemoryRegister', { name: 'out', key: first, byte_size: 16 });
    const sent = send({
      model_name: 'simple',
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4] }],
      raw_input_contents: [raw(Float32Array.from([1, 2, 3, 4]))],
      outputs: [{ name: 'OUTPUT0', parameters: region('out', 16) }],
      parameters: { delay_ms: { int64_param: 300 } },
    });
    await expect.poll(() => fx.probe.running, { timeout: 5000 }).toBe(1);
    await client.call('SystemSharedMemoryUnregister', { name: 'out' });
    await client.call('SystemSharedMemoryRegister', { name: 'out', key: second, byte_size: 16 });
    await sent;
    expect(values(await shm.read(first))).toEqual([1, 2, 3, 4]);
    expect(values(await shm.read(second))).toEqual([0, 0, 0, 0]);
  }

  it('keeps the region a ModelInfer uses when it is unregistered and its name registered on another key meanwhile', async () => {
    const client = await fx.start({ simple: SIMPLE }, {}, ALLOW_SHM);
    await reregisterDuring(async (request) => {
      const response = await client.call('ModelInfer', request);
      expect(response.outputs[0].parameters.shared_memory_region.string_param).toBe('out');
    });
  });

  it('keeps the region a ModelStreamInfer request uses likewise', async () => {
    const client = await fx.start({ simple: SIMPLE }, {}, ALLOW_SHM);
    await reregisterDuring(async (request) => {
      const stream = client.stream();
      stream.write(request);
      const [message] = (await once(stream, 'data')) as [Message];
      stream.end();
      expect(message.error_message).toBe('');
    });
  });
});
