import { randomUUID } from 'node:crypto';
import { closeSync, ftruncateSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startHttpFrontend } from '@tritium/frontend';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHttpFixture, type HttpFixture } from './helpers/http-fixture.js';
import { addModel, simpleModel } from './helpers/http-models.js';

let fx: HttpFixture;
// What shm_open makes: a file in /dev/shm, named by the key without its leading '/'.
const key = `/tritium-http-test-${randomUUID()}`;
const file = `/dev/shm${key}`;

beforeAll(async () => {
  fx = await startHttpFixture({ simple: simpleModel, add: addModel }, { frontend: { allowClientSharedMemory: true } });
  writeFileSync(file, Buffer.alloc(64));
});
afterAll(async () => {
  await fx.stop();
  rmSync(file, { force: true });
});

const post = (path: string, body?: unknown) =>
  fetch(`${fx.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
const errorOf = async (res: Response) => ((await res.json()) as { error: string }).error;

describe('HTTP system shared-memory extension', () => {
  it('registers a region, reports it, reads inputs from it and writes outputs into it, and unregisters it', async () => {
    // Region 'io' is bytes 8..56 of the file: INPUT0 at region offset 0, OUTPUT0 written at 16.
    expect((await post('/v2/systemsharedmemory/region/io/register', { key, offset: 8, byte_size: 48 })).status).toBe(200);
    const all = await fetch(`${fx.url}/v2/systemsharedmemory/status`);
    expect(await all.json()).toEqual([{ name: 'io', key, offset: 8, byte_size: 48 }]);
    expect(await (await fetch(`${fx.url}/v2/systemsharedmemory/region/io/status`)).json()).toEqual([{ name: 'io', key, offset: 8, byte_size: 48 }]);

    const file64 = readFileSync(file);
    Buffer.from(new Float32Array([1, 2, 3, 4]).buffer).copy(file64, 8);
    writeFileSync(file, file64);
    const res = await post('/v2/models/add/infer', {
      inputs: [
        { name: 'INPUT0', datatype: 'FP32', shape: [4], parameters: { shared_memory_region: 'io', shared_memory_byte_size: 16 } },
        { name: 'INPUT1', datatype: 'FP32', shape: [4], data: [10, 10, 10, 10] },
      ],
      outputs: [{ name: 'OUTPUT0', parameters: { shared_memory_region: 'io', shared_memory_offset: 16, shared_memory_byte_size: 32 } }],
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      model_name: 'add',
      model_version: '1',
      outputs: [
        {
          name: 'OUTPUT0',
          datatype: 'FP32',
          shape: [4],
          parameters: { shared_memory_region: 'io', shared_memory_offset: 16, shared_memory_byte_size: 16 },
        },
      ],
    });
    const written = readFileSync(file).subarray(8 + 16, 8 + 32);
    expect(Array.from(new Float32Array(written.buffer.slice(written.byteOffset, written.byteOffset + 16)))).toEqual([11, 12, 13, 14]);

    expect((await post('/v2/systemsharedmemory/region/io/unregister')).status).toBe(200);
    expect(await (await fetch(`${fx.url}/v2/systemsharedmemory/status`)).json()).toEqual([]);
  });

  it('unregisters every region at once', async () => {
    await post('/v2/systemsharedmemory/region/a/register', { key, byte_size: 8 });
    await post('/v2/systemsharedmemory/region/b/register', { key, offset: 8, byte_size: 8 });
    expect(((await (await fetch(`${fx.url}/v2/systemsharedmemory/status`)).json()) as unknown[]).length).toBe(2);
    expect((await post('/v2/systemsharedmemory/unregister')).status).toBe(200);
    expect(await (await fetch(`${fx.url}/v2/systemsharedmemory/status`)).json()).toEqual([]);
  });

  it('refuses bad registrations and bad references, saying why', async () => {
    const cases: Array<[string, unknown, number, string]> = [
      ['/v2/systemsharedmemory/register', { key, byte_size: 8 }, 400, "'region name' is necessary to register system shared memory region"],
      ['/v2/systemsharedmemory/region/r/register', undefined, 400, "the shared memory register request has no 'key' field"],
      ['/v2/systemsharedmemory/region/r/register', { key }, 400, "the shared memory register request has no 'byte_size' field"],
      ['/v2/systemsharedmemory/region/r/register', { key, byte_size: -1 }, 400, "'byte_size' must be a non-negative integer, got number -1"],
      ['/v2/systemsharedmemory/region/r/register', { key: '/no-such-tritium-region', byte_size: 8 }, 500, "Unable to open shared memory region: '/no-such-tritium-region'"],
      ['/v2/systemsharedmemory/region/r/register', { key, byte_size: 1000 }, 400, "failed to register shared memory region 'r': invalid args (offset 0 + byte_size 1000 exceeds the 64 bytes"],
    ];
    for (const [path, body, status, message] of cases) {
      const res = await post(path, body);
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(status);
      expect(await errorOf(res)).toContain(message);
    }
    await post('/v2/systemsharedmemory/region/twice/register', { key, byte_size: 8 });
    const twice = await post('/v2/systemsharedmemory/region/twice/register', { key, byte_size: 8 });
    expect(twice.status).toBe(400);
    expect(await errorOf(twice)).toBe("shared memory region 'twice' already in manager");

    const unknown = await fetch(`${fx.url}/v2/systemsharedmemory/region/ghost/status`);
    expect(unknown.status).toBe(404);
    const input = (parameters: Record<string, unknown>, data?: unknown) => ({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], parameters, data }] });
    const refs: Array<[unknown, string]> = [
      [input({ shared_memory_region: 'ghost', shared_memory_byte_size: 16 }), "Unable to find shared memory region: 'ghost'"],
      [input({ shared_memory_region: 'twice' }), "'shared_memory_byte_size' is required with 'shared_memory_region'"],
      [input({ shared_memory_region: 'twice', shared_memory_byte_size: 16 }), "Invalid offset + byte size for shared memory region: 'twice'"],
      [input({ shared_memory_region: 'twice', shared_memory_byte_size: 8 }, [1, 2, 3, 4]), "set 'data' 'shared_memory_region'"],
    ];
    for (const [body, message] of refs) {
      const res = await post('/v2/models/simple/infer', body);
      expect(res.status, JSON.stringify(body)).not.toBe(200);
      expect(await errorOf(res)).toContain(message);
    }
    const both = await post('/v2/models/simple/infer', {
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }],
      outputs: [{ name: 'OUTPUT0', parameters: { shared_memory_region: 'twice', shared_memory_byte_size: 8, binary_data: true } }],
    });
    expect(await errorOf(both)).toBe("output 'OUTPUT0' can't set both 'shared_memory_region' and 'binary_data'");
    const small = await post('/v2/models/simple/infer', {
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }],
      outputs: [{ name: 'OUTPUT0', parameters: { shared_memory_region: 'twice', shared_memory_byte_size: 8 } }],
    });
    expect(await errorOf(small)).toBe("shared memory region 'twice': the output needs 16 bytes, only 8 were given");
    await post('/v2/systemsharedmemory/unregister');
  });
});

describe('HTTP system shared memory, against a hostile client', () => {
  const made: string[] = [];
  /** A new key in /dev/shm and its path, removed after the test. */
  const newKey = () => {
    const key = `/tritium-http-test-${randomUUID()}`;
    made.push(`/dev/shm${key}`);
    return { key, path: `/dev/shm${key}` };
  };
  afterEach(async () => {
    await post('/v2/systemsharedmemory/unregister');
    for (const path of made.splice(0)) rmSync(path, { recursive: true, force: true });
  });

  it('refuses to register or unregister regions unless allowed (--allow-client-shm), and still reports them', async () => {
    const plain = await startHttpFrontend(fx.server, { host: '127.0.0.1', port: 0 });
    try {
      const url = `http://127.0.0.1:${plain.port}`;
      const disabled = "Client shared memory is disabled. Start the server with '--allow-client-shm=true' to enable.";
      for (const path of ['/v2/systemsharedmemory/region/r/register', '/v2/systemsharedmemory/unregister', '/v2/cudasharedmemory/region/g/register', '/v2/cudasharedmemory/unregister']) {
        const res = await fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify({ key, byte_size: 8 }) });
        expect(res.status, path).toBe(501);
        expect(await errorOf(res)).toBe(disabled);
      }
      expect(await (await fetch(`${url}/v2/systemsharedmemory/status`)).json()).toEqual([]);
    } finally {
      await plain.close();
    }
  });

  it('refuses a key that is a symbolic link, reading nothing through it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tritium-shm-victim-'));
    made.push(dir);
    writeFileSync(join(dir, 'secret'), 'root:x:0:0');
    const { key: link, path } = newKey();
    symlinkSync(join(dir, 'secret'), path);
    const res = await post('/v2/systemsharedmemory/region/evil/register', { key: link, byte_size: 4 });
    // As Triton's shm_open (which does not follow links either): INTERNAL, 500.
    expect(res.status).toBe(500);
    expect(await errorOf(res)).toContain('it is a symbolic link');
  });

  it('refuses an input whose region byte size does not fit its shape, without reading the region', async () => {
    const gib = 2 ** 30;
    const { key: big, path } = newKey();
    const fd = openSync(path, 'w');
    ftruncateSync(fd, gib);
    closeSync(fd);
    expect((await post('/v2/systemsharedmemory/region/big/register', { key: big, byte_size: gib })).status).toBe(200);
    const rss = process.memoryUsage().rss;
    const started = performance.now();
    const res = await post('/v2/models/simple/infer', {
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], parameters: { shared_memory_region: 'big', shared_memory_byte_size: gib } }],
    });
    expect(res.status).toBe(400);
    expect(await errorOf(res)).toBe("input 'INPUT0': shared_memory_byte_size 1073741824 does not match FP32 of shape [4], which needs 16 bytes");
    expect(performance.now() - started).toBeLessThan(1000);
    expect(process.memoryUsage().rss - rss).toBeLessThan(64 * 1024 * 1024);
  });

  it('holds no file descriptor per registered region, and refuses regions beyond maxSharedMemoryRegions', async () => {
    const descriptors = () => readdirSync('/proc/self/fd').length;
    const before = descriptors();
    for (let i = 0; i < 200; i++) {
      expect((await post(`/v2/systemsharedmemory/region/r${i}/register`, { key, byte_size: 8 })).status).toBe(200);
    }
    // Connections come and go; 200 descriptors held would show.
    expect(descriptors() - before).toBeLessThan(20);

    const capped = await startHttpFrontend(fx.server, { host: '127.0.0.1', port: 0, allowClientSharedMemory: true, maxSharedMemoryRegions: 201 });
    try {
      const register = (name: string) => fetch(`http://127.0.0.1:${capped.port}/v2/systemsharedmemory/region/${name}/register`, { method: 'POST', body: JSON.stringify({ key, byte_size: 8 }) });
      expect((await register('last')).status).toBe(200);
      const over = await register('over');
      expect(over.status).toBe(400);
      expect(await errorOf(over)).toBe("unable to register shared memory region 'over': the server holds 201 regions, its limit (maxSharedMemoryRegions 201); unregister some first");
    } finally {
      await capped.close();
    }
  });

  it('keeps the region a request uses when it is unregistered and its name registered on another key meanwhile', async () => {
    const first = newKey();
    const second = newKey();
    writeFileSync(first.path, new Uint8Array(16));
    writeFileSync(second.path, new Uint8Array(16));
    expect((await post('/v2/systemsharedmemory/region/out/register', { key: first.key, byte_size: 16 })).status).toBe(200);
    const answer = post('/v2/models/simple/infer', {
      inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }],
      outputs: [{ name: 'OUTPUT0', parameters: { shared_memory_region: 'out', shared_memory_byte_size: 16 } }],
      parameters: { delay_ms: 300 },
    });
    await expect.poll(() => fx.probe.running, { timeout: 5000 }).toBe(1);
    expect((await post('/v2/systemsharedmemory/region/out/unregister')).status).toBe(200);
    expect((await post('/v2/systemsharedmemory/region/out/register', { key: second.key, byte_size: 16 })).status).toBe(200);
    expect((await answer).status).toBe(200);
    expect(Array.from(new Float32Array(Uint8Array.from(readFileSync(first.path)).buffer))).toEqual([1, 2, 3, 4]);
    expect(Array.from(readFileSync(second.path))).toEqual(new Array(16).fill(0));
  });
});

describe('HTTP CUDA shared-memory extension, on a server without GPU memory', () => {
  it('reports no regions, refuses to register one saying why, and unregisters nothing', async () => {
    expect(await (await fetch(`${fx.url}/v2/cudasharedmemory/status`)).json()).toEqual([]);
    const named = await fetch(`${fx.url}/v2/cudasharedmemory/region/g/status`);
    expect(named.status).toBe(404);
    expect(await errorOf(named)).toBe("Unable to find cuda shared memory region: 'g'");
    const register = await post('/v2/cudasharedmemory/region/g/register', { raw_handle: { b64: 'AAAA' }, device_id: 0, byte_size: 8 });
    expect(register.status).toBe(400);
    expect(await errorOf(register)).toBe("failed to register shared memory region 'g': invalid args (CUDA shared memory: GPUs not supported)");
    expect((await post('/v2/cudasharedmemory/unregister')).status).toBe(200);
    expect((await post('/v2/cudasharedmemory/region/g/unregister')).status).toBe(200);
  });
});
