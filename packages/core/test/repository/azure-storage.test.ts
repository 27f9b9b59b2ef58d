import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { InferenceServer, type InferenceError } from '@tritium/core';
import { AZURITE_ACCOUNT, TestAzurite } from '../helpers/azurite-server.js';
import { useObjectStorageFixture } from '../helpers/object-storage-fixture.js';
import { TempRepository, testConfig, type TestModel } from '../helpers/repository.js';
import { rejection, states } from '../helpers/server-fixture.js';
import { newProbe, testBackend } from '../helpers/test-backend.js';

const input = { INPUT0: { datatype: 'FP32' as const, shape: [4], data: new Float32Array(4) } };

let azurite: TestAzurite;
let containerCount = 0;
const { cleanups, tempDirectory, serve } = useObjectStorageFixture('tritium-azure-cache-');

beforeAll(async () => {
  azurite = await TestAzurite.start();
});
afterAll(async () => {
  await azurite?.close();
});

beforeEach(() => {
  vi.stubEnv('AZURE_STORAGE_CONNECTION_STRING', azurite.connectionString);
  vi.stubEnv('AZURE_STORAGE_ACCOUNT', undefined);
  vi.stubEnv('AZURE_STORAGE_KEY', undefined);
  vi.stubEnv('AZURE_STORAGE_AUTH_TYPE', undefined);
  vi.stubEnv('TRITON_AZURE_MOUNT_DIRECTORY', undefined);
});

/** A fresh container holding `models` under `models/`. */
async function containerWith(models: Record<string, TestModel>): Promise<{ container: string; url: string }> {
  const container = `container-${++containerCount}`;
  await azurite.createContainer(container);
  const local = await TempRepository.create(models);
  cleanups.push(() => local.remove());
  await azurite.upload(local.path, container, 'models/');
  return { container, url: `as://${AZURITE_ACCOUNT}/${container}/models` };
}

describe('as:// model repositories (Azurite)', () => {
  it('serves versions and version policies from a container, beside a local repository', async () => {
    const { url } = await containerWith({ all: { config: testConfig({ extra: 'version_policy { all { } }' }), versions: { 1: '', 2: '' } } });
    const local = await TempRepository.create({ nearby: { config: testConfig({}) } });
    cleanups.push(() => local.remove());
    const server = await serve([url, local.path]);
    expect(states(await server.repositoryIndex())).toEqual(['all:1:READY', 'all:2:READY', 'nearby:1:READY']);
    await expect(server.infer('all', { inputs: input, modelVersion: 2 })).resolves.toMatchObject({ modelVersion: 2 });
  });

  it('lands in TRITON_AZURE_MOUNT_DIRECTORY and a restart downloads nothing', async () => {
    const { container, url } = await containerWith({ m: { config: testConfig({}) } });
    const mount = await tempDirectory();
    vi.stubEnv('TRITON_AZURE_MOUNT_DIRECTORY', mount);
    const first = await InferenceServer.start({ modelRepository: url, backends: [testBackend(newProbe())] });
    cleanups.push(() => first.stop());
    await first.stop();
    const cached = join(mount, 'as', AZURITE_ACCOUNT, container, 'models', 'm', '1', 'model.test');
    const before = await stat(cached);
    const restarted = await InferenceServer.start({ modelRepository: url, backends: [testBackend(newProbe())] });
    cleanups.push(() => restarted.stop());
    expect(states(await restarted.repositoryIndex())).toEqual(['m:1:READY']);
    expect((await stat(cached)).ino).toBe(before.ino);
  });

  it('poll mode: an upload loads; a container that vanishes leaves the models serving, and says so', async () => {
    const { container, url } = await containerWith({ m: { config: testConfig({}) } });
    const server = await serve(url, { modelControlMode: 'poll', pollIntervalMs: 60_000 });
    await azurite.put(container, 'models/m/2/model.test', '');
    await server.pollRepository();
    // Version 1 leaves once version 2 is ready.
    await vi.waitFor(async () => expect(states(await server.repositoryIndex())).toEqual(['m:1:UNAVAILABLE', 'm:2:READY']));
    const reported: InferenceError[] = [];
    server.on('repositoryError', (error) => reported.push(error));
    await azurite.deleteContainer(container);
    await server.pollRepository();
    expect(reported.map((error) => [error.code, error.message])).toEqual([['NOT_FOUND', `cannot read model repository '${url}': container '${container}' does not exist`]]);
    await expect(server.infer('m', { inputs: input })).resolves.toMatchObject({ modelVersion: 2 });
  });

  it('refuses a wrong account key with UNAVAILABLE naming the container, never the key', async () => {
    const { container, url } = await containerWith({ m: { config: testConfig({}) } });
    const wrongKey = Buffer.from('not-the-key-0123456789').toString('base64');
    const endpoint = /BlobEndpoint=([^;]+)/.exec(azurite.connectionString)![1];
    vi.stubEnv('AZURE_STORAGE_CONNECTION_STRING', `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${wrongKey};BlobEndpoint=${endpoint};`);
    const error = await rejection(serve(url));
    expect([error.code, error.message]).toEqual(['UNAVAILABLE', `cannot read model repository '${url}': access to container '${container}' was refused (AuthorizationFailure): check the Azure Storage credentials`]);
    expect(JSON.stringify(error) + String(error.stack)).not.toContain(wrongKey);
  });

  it('refuses managed identity, which is not built, and a path without a container', async () => {
    vi.stubEnv('AZURE_STORAGE_AUTH_TYPE', 'managed_identity');
    const { url } = await containerWith({ m: { config: testConfig({}) } });
    const identity = await rejection(serve(url));
    expect([identity.code, identity.message]).toEqual(['UNSUPPORTED', `model repository '${url}': AZURE_STORAGE_AUTH_TYPE 'managed_identity' (managed identity, DefaultAzureCredential) is not supported; use AZURE_STORAGE_ACCOUNT and AZURE_STORAGE_KEY`]);
    expect((await rejection(serve('as://account'))).message).toMatch(/names no valid storage account and container/);
  });
});
