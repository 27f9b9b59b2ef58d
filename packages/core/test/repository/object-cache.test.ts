import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ObjectCache, type ModelObject } from '../../src/repository/object-cache.js';
import { S3Bucket } from '../../src/repository/s3-bucket.js';
import { parseS3Location } from '../../src/repository/s3-location.js';

const object = (path: string, content: string, etag = `"${content}"`): ModelObject => ({ path, key: `models/m/${path}`, address: `s3://b/models/m/${path}`, etag, size: content.length });

describe('ObjectCache', () => {
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(join(tmpdir(), 'tritium-object-cache-'));
  });
  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('never leaves an interrupted download where the model reads it, and fetches it whole next time', async () => {
    const content = 'weights!';
    const cut = new ObjectCache(directory, async (_, file) => {
      await writeFile(file, content.slice(0, 3));
      throw new Error('connection reset');
    }, 1024);
    await expect(cut.localize('m', [object('1/model.bin', content)])).rejects.toThrow('connection reset');
    expect(await readdir(join(directory, 'm', '1'))).toEqual([]);

    const short = new ObjectCache(directory, (_, file) => writeFile(file, content.slice(0, 3)), 1024);
    await expect(short.localize('m', [object('1/model.bin', content)])).rejects.toThrow("model 'm': object 's3://b/models/m/1/model.bin' arrived with 3 of its 8 bytes");
    expect(await readdir(join(directory, 'm', '1'))).toEqual([]);

    let fetched = 0;
    const whole = new ObjectCache(directory, async (_, file) => {
      fetched++;
      await writeFile(file, content);
    }, 1024);
    await whole.localize('m', [object('1/model.bin', content)]);
    await whole.localize('m', [object('1/model.bin', content)]);
    expect(fetched).toBe(1);
    expect(await readFile(join(directory, 'm', '1', 'model.bin'), 'utf8')).toBe(content);
  });

  it('takes a manifest that is not JSON as an empty one: the load downloads again', async () => {
    let fetched = 0;
    const cache = new ObjectCache(directory, async (_, file) => {
      fetched++;
      await writeFile(file, 'x');
    }, 1024);
    await cache.localize('m', [object('1/a', 'x')]);
    await writeFile(join(directory, '.tritium-objects', 'm.json'), '{"1/a": {"etag"');
    await cache.localize('m', [object('1/a', 'x')]);
    expect(fetched).toBe(2);
  });

  it('removes what the store no longer lists, and refuses a key leading out of the model', async () => {
    const cache = new ObjectCache(directory, (_, file) => writeFile(file, 'x'), 1024);
    await cache.localize('m', [object('1/a', 'x'), object('2/b', 'x')]);
    await cache.localize('m', [object('2/b', 'x')]);
    expect(await readdir(join(directory, 'm'))).toEqual(['2']);
    await expect(cache.localize('m', [object('../escape', 'x')])).rejects.toThrow("object 's3://b/models/m/../escape' names a path outside the model directory");
  });
});

describe('s3:// paths and the SDK', () => {
  it('parses Triton\'s forms', () => {
    expect(parseS3Location('s3://bucket/a//b/')).toMatchObject({ endpoint: undefined, bucket: 'bucket', prefix: 'a/b/' });
    expect(parseS3Location('s3://localhost:9000/bucket')).toMatchObject({ endpoint: 'http://localhost:9000', bucket: 'bucket', prefix: '' });
    expect(parseS3Location('s3://https://minio.internal:443/bucket/models')).toMatchObject({ endpoint: 'https://minio.internal:443', bucket: 'bucket', prefix: 'models/' });
    expect(() => parseS3Location('s3://Bad_Bucket/x')).toThrow("model repository 's3://Bad_Bucket/x' names no valid bucket");
    expect(() => parseS3Location('s3://bucket/a/../b')).toThrow("'.' and '..' are not allowed");
  });

  it('names the package to install when @aws-sdk/client-s3 is missing', async () => {
    const missing = Object.assign(new Error("Cannot find package '@aws-sdk/client-s3' imported from core"), { code: 'ERR_MODULE_NOT_FOUND' });
    const bucket = new S3Bucket(parseS3Location('s3://bucket/models'), () => Promise.reject(missing));
    await expect(bucket.objects('models/')).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: "model repository 's3://bucket/models' needs the @aws-sdk/client-s3 package, which is not installed: npm install @aws-sdk/client-s3",
    });
  });
});
