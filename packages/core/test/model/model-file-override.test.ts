import { access, readFile } from 'node:fs/promises';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { InferenceServer, type Backend } from '@tritium/core';
import { TempRepository, testConfig } from '../helpers/repository.js';
import { rejection, useServerFixture } from '../helpers/server-fixture.js';
import { testBackend } from '../helpers/test-backend.js';

// Triton's "load with model file override": the files a load carries make a temporary
// model directory the model is loaded from; core removes it once nothing loaded from it serves.
const fx = useServerFixture();

/** The model directory of each model the backend created, in order. */
let directories: string[];

/** An explicit-mode server on the test backend that records where each model was loaded from. */
async function start(models: Parameters<typeof TempRepository.create>[0] = {}): Promise<InferenceServer> {
  directories = [];
  const base = testBackend();
  const recording: Backend = {
    ...base,
    createModel(context) {
      directories.push(context.modelDirectory);
      return base.createModel(context);
    },
  };
  fx.repo = await TempRepository.create(models);
  fx.server = await InferenceServer.start({ modelRepository: fx.repo.path, backends: [recording], modelControlMode: 'explicit' });
  return fx.server;
}

const bytes = (text: string) => new TextEncoder().encode(text);
const exists = (path: string) => access(path).then(() => true, () => false);
const fp32 = (n: number) => ({ datatype: 'FP32' as const, shape: [n], data: Float32Array.from({ length: n }, (_, i) => i) });
const pollFailure = (model: string) => `failed to load '${model}', failed to poll from model repository: `;

describe('load with model file override', () => {
  it('loads and serves a model the repository lacks from the files sent, and removes their directory on unload', async () => {
    const server = await start();
    await server.loadModel('sent', { config: testConfig({ dims: [2] }), files: { '1/model.test': bytes(''), 'labels/extra.txt': bytes('a') } });
    const [directory] = directories;
    expect(directory).not.toContain(fx.repo!.path);
    expect(await readFile(join(directory!, 'labels', 'extra.txt'), 'utf8')).toBe('a');
    expect((await server.infer('sent', { inputs: { INPUT0: fp32(2) } })).outputs.OUTPUT0!.data).toEqual(Float32Array.from([0, 1]));

    await server.unloadModel('sent');
    expect(await exists(directory!)).toBe(false);
  });

  it('reloads from the repository when a later load sends no files, removing the sent directory', async () => {
    const server = await start({ m: { config: testConfig({ dims: [4] }) } });
    await server.loadModel('m', { config: testConfig({ dims: [2] }), files: { '1/model.test': bytes('') } });
    expect((await server.modelMetadata('m')).inputs[0]!.shape).toEqual([2]);
    const sent = directories[0]!;

    await server.loadModel('m');
    expect((await server.modelMetadata('m')).inputs[0]!.shape).toEqual([4]);
    expect(directories[1]).toBe(join(fx.repo!.path, 'm'));
    // The replaced version drains in the background; its directory goes once it is finalized.
    await vi.waitFor(async () => expect(await exists(sent)).toBe(false));
  });

  it('removes the directory when the server stops, and when the load fails', async () => {
    const server = await start();
    await server.loadModel('m', { config: testConfig({}), files: { '1/model.test': bytes('') } });
    const error = await rejection(server.loadModel('bad', { config: testConfig({}), files: { '1/model.test': bytes('{"fail": "broken"}') } }));
    expect(error.message).toMatch(/^load failed for model 'bad': .*test model file says: broken/);
    expect(await exists(directories[1]!)).toBe(false);
    // The model that loaded still serves from its own directory.
    expect(await exists(directories[0]!)).toBe(true);

    await server.stop();
    expect(await exists(directories[0]!)).toBe(false);
  });

  it('refuses a path that leads out of the model directory, writing nothing there', async () => {
    const server = await start();
    const escape = `../${randomUUID()}`;
    for (const path of [escape, `1/../../${randomUUID()}`, join(tmpdir(), randomUUID())]) {
      const error = await rejection(server.loadModel('m', { config: testConfig({}), files: { '1/model.test': bytes(''), [path]: bytes('x') } }));
      expect(error.code, path).toBe('INTERNAL');
      expect(error.message, path).toMatch(new RegExp(`^${pollFailure('m')}Invalid file parameter 'file:.*' with normalized path '.*' must stay within model directory\\.$`));
    }
    expect(await exists(join(tmpdir(), escape))).toBe(false);
    expect(directories).toEqual([]);
  });

  it("refuses files without a config, and a value that is not bytes, in Triton's words", async () => {
    const server = await start();
    const noConfig = await rejection(server.loadModel('m', { files: { '1/model.test': bytes('') } }));
    expect({ code: noConfig.code, message: noConfig.message }).toEqual({
      code: 'INTERNAL',
      message: `${pollFailure('m')}Load parameter 'config' must be specified for model file override`,
    });
    const notBytes = await rejection(server.loadModel('m', { config: testConfig({}), files: { '1/model.test': 'text' as unknown as Uint8Array } }));
    expect(notBytes.message).toBe(`${pollFailure('m')}File parameter 'file:1/model.test' must have bytes type for its value`);
  });

  it('fails a name component past NAME_MAX as INTERNAL, and the server keeps serving', async () => {
    // As Triton's simple_grpc_model_control.py sends it.
    const server = await start({ simple: { config: testConfig({}) } });
    await server.loadModel('simple');
    const error = await rejection(server.loadModel('simple', { config: {}, files: { ['A'.repeat(256)]: bytes('a') } }));
    expect(error.code).toBe('INTERNAL');
    expect(error.message).toContain(`${pollFailure('simple')}Invalid file parameter 'file:${'A'.repeat(256)}'`);
    expect(await server.isModelReady('simple')).toBe(true);
    expect((await server.infer('simple', { inputs: { INPUT0: fp32(4) } })).outputs.OUTPUT0!.data).toEqual(Float32Array.from([0, 1, 2, 3]));
  });
});
