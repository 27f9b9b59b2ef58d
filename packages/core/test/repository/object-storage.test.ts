import { readFile, stat, writeFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { InferenceServer, type InferenceError, type ServerOptions } from '@tritium/core';
import { useObjectStorageFixture } from '../helpers/object-storage-fixture.js';
import { TempRepository, testConfig, type TestModel } from '../helpers/repository.js';
import { rejection, states } from '../helpers/server-fixture.js';
import { S3_CREDENTIALS, TestS3Server } from '../helpers/s3-server.js';
import { newProbe, sleep, testBackend } from '../helpers/test-backend.js';

const input = { INPUT0: { datatype: 'FP32' as const, shape: [4], data: new Float32Array(4) } };

let s3: TestS3Server;
let bucketCount = 0;
const { cleanups, tempDirectory, serve } = useObjectStorageFixture('tritium-s3-cache-');

beforeAll(async () => {
  s3 = await TestS3Server.start();
});
afterAll(async () => {
  await s3?.close();
});

beforeEach(() => {
  // The credential chain sees s3rver's account and nothing of this machine's own AWS set-up.
  vi.stubEnv('AWS_ACCESS_KEY_ID', S3_CREDENTIALS.accessKeyId);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', S3_CREDENTIALS.secretAccessKey);
  vi.stubEnv('AWS_SHARED_CREDENTIALS_FILE', '/nonexistent/credentials');
  vi.stubEnv('AWS_CONFIG_FILE', '/nonexistent/config');
  vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
  vi.stubEnv('TRITON_AWS_MOUNT_DIRECTORY', undefined);
});

/** A fresh bucket holding `models` under `models/`, and the local repository they were written from. */
async function bucketWith(models: Record<string, TestModel>): Promise<{ bucket: string; url: string; local: TempRepository }> {
  const bucket = `bucket-${++bucketCount}`;
  await s3.createBucket(bucket);
  const local = await TempRepository.create(models);
  cleanups.push(() => local.remove());
  await s3.upload(local.path, bucket, 'models/');
  return { bucket, url: `s3://${s3.host}/${bucket}/models`, local };
}

describe('s3:// model repositories', () => {
  it('serves versions, version policies and configs/<name>.pbtxt from a bucket', async () => {
    const { bucket, url } = await bucketWith({
      all: { config: testConfig({ extra: 'version_policy { all { } }' }), versions: { 1: '', 2: '', 3: '' } },
      latest: { config: testConfig({}), versions: { 1: '', 7: '' } },
    });
    await s3.put(bucket, 'models/latest/configs/pinned.pbtxt', testConfig({ extra: 'version_policy { specific { versions: [ 1 ] } }' }));
    const server = await serve(url, { modelConfigName: 'pinned' });
    expect(states(await server.repositoryIndex())).toEqual(['all:1:READY', 'all:2:READY', 'all:3:READY', 'latest:1:READY']);
    await expect(server.infer('latest', { inputs: input })).resolves.toMatchObject({ modelVersion: 1 });
  });

  it("reads Triton's s3://http://host:port form at a bucket's root, with directory markers and a stray file", async () => {
    const { bucket } = await bucketWith({});
    // Directory markers, as consoles and some tools write them, and a file beside the models.
    for (const marker of ['m/', 'm/1/']) await s3.put(bucket, marker, '');
    await s3.put(bucket, 'README.txt', 'not a model');
    await s3.put(bucket, 'm/config.pbtxt', testConfig({}));
    await s3.put(bucket, 'm/1/model.test', '');
    const server = await serve(`s3://http://${s3.host}//${bucket}/`);
    expect(states(await server.repositoryIndex())).toEqual(['m:1:READY']);
  });

  it('downloads each file once: a restart reuses the cache, and an object changed in place downloads again', async () => {
    const { bucket, url } = await bucketWith({ m: { config: testConfig({}), versions: { 1: '{"a":1}' } } });
    const cacheDirectory = await tempDirectory();
    vi.stubEnv('TRITON_AWS_MOUNT_DIRECTORY', cacheDirectory);
    const server = await InferenceServer.start({ modelRepository: url, backends: [testBackend(newProbe())] });
    cleanups.push(() => server.stop());
    expect(states(await server.repositoryIndex())).toEqual(['m:1:READY']);
    await server.stop();
    const cached = join(cacheDirectory, 's3', s3.host.replace(':', '_'), bucket, 'models', 'm', '1', 'model.test');
    const first = await stat(cached);

    const restarted = await serve(url, { objectStorage: { cacheDirectory } });
    expect(states(await restarted.repositoryIndex())).toEqual(['m:1:READY']);
    expect((await stat(cached)).ino).toBe(first.ino);
    await restarted.stop();

    await s3.put(bucket, 'models/m/1/model.test', '{"b":2}'); // same size, new ETag
    await serve(url, { objectStorage: { cacheDirectory } });
    expect(await readFile(cached, 'utf8')).toBe('{"b":2}');
  });

  it('downloads again a cached file whose size is wrong, and removes leftovers of interrupted downloads', async () => {
    const { bucket, url } = await bucketWith({ m: { config: testConfig({}), versions: { 1: '{"n":12345}' } } });
    const cacheDirectory = await tempDirectory();
    await (await serve(url, { objectStorage: { cacheDirectory } })).stop();
    const version = join(cacheDirectory, 's3', s3.host.replace(':', '_'), bucket, 'models', 'm', '1');
    await writeFile(join(version, 'model.test'), '{"n":1'); // a file cut short
    await writeFile(join(version, '.0000.partial'), 'half');
    await serve(url, { objectStorage: { cacheDirectory } });
    expect(await readFile(join(version, 'model.test'), 'utf8')).toBe('{"n":12345}');
    expect(await readdir(version)).toEqual(['model.test']);
  });

  it('poll mode: an upload loads, the new version ready before the old leaves, under traffic', async () => {
    const { bucket, url } = await bucketWith({ m: { config: testConfig({ count: 2 }) } });
    const server = await serve(url, { modelControlMode: 'poll', pollIntervalMs: 60_000 });
    let stop = false;
    const failures: unknown[] = [];
    const traffic = Array.from({ length: 4 }, async () => {
      while (!stop) await server.infer('m', { inputs: input, parameters: { delay_ms: 1 } }).catch((e: unknown) => failures.push(e));
    });
    await sleep(20);
    await s3.put(bucket, 'models/m/2/model.test', '');
    await s3.put(bucket, 'models/n/config.pbtxt', testConfig({}));
    await s3.put(bucket, 'models/n/1/model.test', '');
    await server.pollRepository();
    await sleep(20);
    stop = true;
    await Promise.all(traffic);
    expect(failures).toEqual([]);
    expect(states(await server.repositoryIndex())).toEqual(['m:1:UNAVAILABLE', 'm:2:READY', 'n:1:READY']);

    await s3.deleteObjects(bucket, 'models/n/');
    await server.pollRepository();
    expect(states(await server.repositoryIndex())).toEqual(['m:1:UNAVAILABLE', 'm:2:READY', 'n:1:UNAVAILABLE']);
  });

  it('explicit mode downloads only the models asked for', async () => {
    const { bucket, url } = await bucketWith({ a: { config: testConfig({}) }, b: { config: testConfig({}) } });
    const cacheDirectory = await tempDirectory();
    const server = await serve(url, { modelControlMode: 'explicit', objectStorage: { cacheDirectory } });
    await server.loadModel('a');
    expect(states(await server.repositoryIndex())).toEqual(['a:1:READY', 'b:-:UNAVAILABLE']);
    expect(await readdir(join(cacheDirectory, 's3', s3.host.replace(':', '_'), bucket, 'models'))).toEqual(['.tritium-objects', 'a']);
    const error = await rejection(server.loadModel('c'));
    expect(error.message).toMatch(/model 'c' is not in the model repository/);
  });

  it('serves local and S3 repositories together, and refuses a name found in both', async () => {
    const { url } = await bucketWith({ remote: { config: testConfig({}) }, twice: { config: testConfig({}) } });
    const local = await TempRepository.create({ nearby: { config: testConfig({}) }, twice: { config: testConfig({}) } });
    cleanups.push(() => local.remove());
    const server = await serve([local.path, url]);
    const index = await server.repositoryIndex();
    expect(states(index)).toEqual(['nearby:1:READY', 'remote:1:READY', 'twice:-:UNAVAILABLE']);
    expect(index.find((entry) => entry.name === 'twice')!.reason).toBe(`model 'twice' appears in more than one repository: '${local.path}' and '${url}'`);
  });

  it('keeps serving when the bucket vanishes during poll, and says so', async () => {
    const { bucket, url } = await bucketWith({ m: { config: testConfig({}) } });
    const server = await serve(url, { modelControlMode: 'poll', pollIntervalMs: 60_000 });
    const reported: InferenceError[] = [];
    server.on('repositoryError', (error) => reported.push(error));
    await s3.deleteBucket(bucket);
    await server.pollRepository();
    expect(reported.map((error) => [error.code, error.message])).toEqual([['NOT_FOUND', `cannot read model repository '${url}': bucket '${bucket}' does not exist`]]);
    await expect(server.infer('m', { inputs: input })).resolves.toBeTruthy();
    // The index lists the repository, so it fails until the bucket is back.
    expect((await rejection(server.repositoryIndex())).message).toMatch(/bucket '.*' does not exist/);
  });

  // s3rver checks the key id but not a version-4 signature, so a wrong secret alone cannot be shown refused here.
  it('refuses unknown credentials with UNAVAILABLE naming the bucket, never the secret', async () => {
    const { bucket, url } = await bucketWith({ m: { config: testConfig({}) } });
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'AKIAUNKNOWN');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'not-the-secret-0123456789');
    const error = await rejection(serve(url));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toBe(`cannot read model repository '${url}': access to bucket '${bucket}' was refused (InvalidAccessKeyId): check the AWS credentials`);
    expect(JSON.stringify(error) + String(error.stack) + String(error.cause)).not.toContain('not-the-secret');
  });

  it('takes credentials from the shared credentials file, profile AWS_PROFILE', async () => {
    const { url } = await bucketWith({ m: { config: testConfig({}) } });
    const home = await tempDirectory();
    await writeFile(join(home, 'credentials'), `[other]\naws_access_key_id = nobody\naws_secret_access_key = nothing\n[tritium]\naws_access_key_id = ${S3_CREDENTIALS.accessKeyId}\naws_secret_access_key = ${S3_CREDENTIALS.secretAccessKey}\n`);
    vi.stubEnv('AWS_ACCESS_KEY_ID', undefined);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', undefined);
    vi.stubEnv('AWS_SHARED_CREDENTIALS_FILE', join(home, 'credentials'));
    vi.stubEnv('AWS_PROFILE', 'tritium');
    const server = await serve(url);
    expect(states(await server.repositoryIndex())).toEqual(['m:1:READY']);
  });

  it('refuses an object over the size limit, naming it, and loads the other models', async () => {
    const { bucket, url } = await bucketWith({ big: { config: testConfig({}), versions: { 1: 'x'.repeat(2000) } }, small: { config: testConfig({}) } });
    const server = await serve(url, { objectStorage: { maxObjectBytes: 1024 } });
    const index = await server.repositoryIndex();
    expect(states(index)).toEqual(['big:-:UNAVAILABLE', 'small:1:READY']);
    expect(index[0]!.reason).toContain(`object 's3://${bucket}/models/big/1/model.test' is 2000 bytes, over the 1024-byte limit on one object (objectStorage.maxObjectBytes)`);
  });

  it('poll mode: a version with an object over the limit does not load, and the version serving stays', async () => {
    const { bucket, url } = await bucketWith({ m: { config: testConfig({}) } });
    const server = await serve(url, { modelControlMode: 'poll', pollIntervalMs: 60_000, objectStorage: { maxObjectBytes: 1024 } });
    await s3.put(bucket, 'models/m/2/model.test', 'x'.repeat(2000));
    await server.pollRepository();
    await expect(server.infer('m', { inputs: input })).resolves.toMatchObject({ modelVersion: 1 });
    const [entry] = await server.repositoryIndex();
    expect(entry).toMatchObject({ name: 'm', version: 1, state: 'READY', reason: expect.stringContaining(`object 's3://${bucket}/models/m/2/model.test' is 2000 bytes`) });
  });

  it('refuses bad objectStorage options naming the field, whatever the repositories', async () => {
    const local = await TempRepository.create({});
    cleanups.push(() => local.remove());
    const start = (objectStorage: unknown) => rejection(InferenceServer.start({ modelRepository: local.path, objectStorage: objectStorage as ServerOptions['objectStorage'] }));
    expect((await start({ maxObjectBytes: 0 })).message).toBe('`objectStorage.maxObjectBytes` must be a positive integer, got 0');
    expect((await start({ cacheDirectory: 7 })).message).toBe('`objectStorage.cacheDirectory` must be a non-empty directory path, got 7');
    expect((await start('/tmp/cache')).message).toBe('`objectStorage` must be an object { cacheDirectory?, maxObjectBytes? }, got /tmp/cache');
  });

  it('refuses a path with nothing under it, an endpoint that does not answer, a bad path, and gs://', async () => {
    const { bucket } = await bucketWith({ m: { config: testConfig({}) } });
    const empty = await rejection(serve(`s3://${s3.host}/${bucket}/nothing-here`));
    expect([empty.code, empty.message]).toEqual(['NOT_FOUND', `cannot read model repository 's3://${s3.host}/${bucket}/nothing-here': nothing is stored under it`]);
    const unreachable = await rejection(serve('s3://127.0.0.1:1/models-bucket/models'));
    expect([unreachable.code, unreachable.message]).toEqual(['UNAVAILABLE', expect.stringMatching(/^cannot read model repository 's3:\/\/127.0.0.1:1\/models-bucket\/models': reading prefix 'models\/' of bucket 'models-bucket' failed: .*ECONNREFUSED/)]);
    expect((await rejection(serve(`s3://${s3.host}/`))).message).toMatch(/names no valid bucket/);
    expect((await rejection(serve('s3://https://bucket/path'))).message).toMatch(/'https:\/\/' must be followed by host:port/);
    const gcs = await rejection(serve('gs://bucket/models'));
    expect([gcs.code, gcs.message]).toEqual(['UNSUPPORTED', "model repository 'gs://bucket/models': Google Cloud Storage (gs://) repositories are not supported; Tritium reads local directories, s3:// and as:// (docs/object-storage.md)"]);
  });
});
