import { execFile } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { modelArtifact } from './helpers.js';

/**
 * What an npm user gets: both packages built, packed and installed with npm into an
 * application outside the workspace, then imported from ESM and CommonJS (each running
 * a real inference, so that every file the runtime needs must be in the tarballs) and
 * type-checked as a node16 CommonJS and an ESM consumer. Core's two faces, `@tritium/core`
 * and `@tritium/core/backend`, resolve in both formats, hand out the same objects for what
 * both export, and leave core's internals out.
 */
const root = fileURLToPath(new URL('../../../', import.meta.url));
const fromRoot = createRequire(join(root, 'package.json'));
const manifest = fromRoot('./package.json') as { packageManager: string; devDependencies: Record<string, string> };
const run = promisify(execFile);
const PACKAGES = ['@tritium/batcher', '@tritium/core', '@tritium/backend-onnx'];

// tiny.onnx: OUTPUT0 = INPUT0 + 1, shape [batch, 1].
const TINY_CONFIG = `backend: "onnxruntime"
max_batch_size: 8
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] }
`;

const ESM_APP = `import * as core from '@tritium/core';
import * as backend from '@tritium/core/backend';
import { onnxBackend } from '@tritium/backend-onnx';
const server = await core.InferenceServer.start({ modelRepository: process.argv[2], backends: [onnxBackend()] });
const { outputs } = await server.infer('tiny', { inputs: { INPUT0: { datatype: 'FP32', shape: [2, 1], data: new Float32Array([1, 2]) } } });
console.log(JSON.stringify(Array.from(outputs.OUTPUT0.data)));
console.log(core.InferenceError === backend.InferenceError, core.dataTypeFromConfig === backend.dataTypeFromConfig, typeof backend.gatherBatchInput, 'toTensor' in core || 'toTensor' in backend);
await server.stop();
`;

const CJS_APP = `const core = require('@tritium/core');
const backend = require('@tritium/core/backend');
const { onnxBackend } = require('@tritium/backend-onnx');
(async () => {
  const server = await core.InferenceServer.start({ modelRepository: process.argv[2], backends: [onnxBackend()] });
  const { outputs } = await server.infer('tiny', { inputs: { INPUT0: { datatype: 'FP32', shape: [2, 1], data: new Float32Array([3, 4]) } } });
  console.log(JSON.stringify(Array.from(outputs.OUTPUT0.data)));
  console.log(core.InferenceError === backend.InferenceError, core.dataTypeFromConfig === backend.dataTypeFromConfig, typeof backend.gatherBatchInput, 'toTensor' in core || 'toTensor' in backend);
  await server.stop();
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;

// The same source, read as CommonJS (.ts in a package without "type": "module") and as ESM (.mts).
const CONSUMER = `import { InferenceError, InferenceServer, type InferResponse } from '@tritium/core';
import { gatherBatchInput, type Backend } from '@tritium/core/backend';
import { onnxBackend } from '@tritium/backend-onnx';

/** A backend written against the backend face: OUTPUT0 is INPUT0. */
export const echo: Backend = {
  name: 'echo',
  createModel: async () => ({
    createInstance: async () => ({ execute: async (requests) => requests.map((request) => ({ OUTPUT0: gatherBatchInput([request], 'INPUT0') })) }),
  }),
};

export async function infer(modelRepository: string): Promise<InferResponse> {
  const server = await InferenceServer.start({ modelRepository, backends: [onnxBackend()] });
  try {
    return await server.infer('tiny', { inputs: { INPUT0: { datatype: 'FP32', shape: [1, 1], data: new Float32Array(1) } } });
  } finally {
    await server.stop();
  }
}

export const code = (error: unknown): string | undefined => (error instanceof InferenceError ? error.code : undefined);
`;

const TSCONFIG = {
  compilerOptions: { module: 'node16', moduleResolution: 'node16', target: 'es2022', strict: true, noEmit: true, types: ['node'] },
  files: ['consumer-cjs.ts', 'consumer-esm.mts'],
};

describe('the packed packages, installed with npm', () => {
  it('serve an inference from ESM and CommonJS and type-check as node16 CommonJS and ESM consumers', async (context) => {
    const registry = await npmRegistryProblem();
    if (registry) {
      console.log(`packaging test skipped: the npm registry cannot be reached (${registry})`);
      context.skip();
    }
    const work = await mkdtemp(join(tmpdir(), 'tritium-packaging-'));
    try {
      const pnpm = ['-y', manifest.packageManager];
      const filters = PACKAGES.flatMap((name) => ['--filter', name]);
      await run('npx', [...pnpm, ...filters, 'run', 'build'], { cwd: root });
      const tarballs = join(work, 'tarballs');
      await run('npx', [...pnpm, ...filters, 'pack', '--pack-destination', tarballs], { cwd: root });

      const app = join(work, 'app');
      await mkdir(app);
      await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'tritium-packaging-app', private: true }));
      const packed = (await readdir(tarballs)).map((file) => join(tarballs, file));
      expect(packed).toHaveLength(PACKAGES.length);
      // onnxruntime-node's install script downloads GPU binaries; the CPU ones ship in the package.
      await run('npm', ['install', '--no-audit', '--no-fund', ...packed, `@types/node@${manifest.devDependencies['@types/node']}`], {
        cwd: app,
        env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip' },
      });

      const repository = join(work, 'models');
      await mkdir(join(repository, 'tiny', '1'), { recursive: true });
      await writeFile(join(repository, 'tiny', 'config.pbtxt'), TINY_CONFIG);
      await cp(modelArtifact('tiny'), join(repository, 'tiny', '1', 'model.onnx'));
      await writeFile(join(app, 'esm.mjs'), ESM_APP);
      await writeFile(join(app, 'cjs.cjs'), CJS_APP);
      expect((await run(process.execPath, ['esm.mjs', repository], { cwd: app })).stdout.trim()).toBe('[2,3]\ntrue true function false');
      expect((await run(process.execPath, ['cjs.cjs', repository], { cwd: app })).stdout.trim()).toBe('[4,5]\ntrue true function false');

      await writeFile(join(app, 'consumer-cjs.ts'), CONSUMER);
      await writeFile(join(app, 'consumer-esm.mts'), CONSUMER);
      await writeFile(join(app, 'tsconfig.json'), JSON.stringify(TSCONFIG));
      const tsc = fromRoot.resolve('typescript/bin/tsc');
      const checked = await run(process.execPath, [tsc, '-p', 'tsconfig.json'], { cwd: app }).then(
        () => '',
        (error: { stdout: string }) => error.stdout,
      );
      expect(checked).toBe('');
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }, 300_000);
});

/** Why the registry cannot be used, or undefined when it answers. */
async function npmRegistryProblem(): Promise<string | undefined> {
  try {
    await run('npm', ['ping', '--fetch-retries=0'], { timeout: 20_000 });
    return undefined;
  } catch (error) {
    const { killed, stderr = '' } = error as { killed?: boolean; stderr?: string };
    if (killed) return '`npm ping` did not answer within 20 s';
    return stderr.split('\n').find((line) => line.includes('FetchError')) ?? (error as Error).message;
  }
}
