// Every publishable package as an npm user meets it: built, packed, installed with npm
// into an application outside the workspace (install scripts and all: the Python and
// PyTorch addons compile there), then used from ESM and CommonJS with an inference
// through each backend present, served over HTTP by the `tritium` bin, and type-checked
// as node16 CommonJS, node16 ESM and bundler-resolution consumers. Minutes long (the
// addon builds), so in `pnpm test:deploy` (vitest.deploy.config.ts), not the default suite.
// Skips, saying why, where the npm registry cannot be reached; the Python backend's
// inference needs python3 with numpy, the PyTorch backend's needs torch, the llama.cpp
// backend's needs python3 with gguf to write its tiny model: each is left out, saying so,
// where missing.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { makeTinyLlamaModel, tinyGgufUnavailable } from '../../packages/backend-llamacpp/models/tiny-llama.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const fromRoot = createRequire(join(root, 'package.json'));
const manifest = fromRoot('./package.json') as { packageManager: string; devDependencies: Record<string, string> };
const run = promisify(execFile);
const PACKAGES = [
  '@tritium/batcher',
  '@tritium/core',
  '@tritium/native-addon',
  '@tritium/backend-onnx',
  '@tritium/backend-python',
  '@tritium/backend-pytorch',
  '@tritium/backend-fil',
  '@tritium/backend-llamacpp',
  '@tritium/frontend',
];

/** Why python3 cannot run `import <module>`, or undefined when it can. */
function pythonLacks(module: string): string | undefined {
  try {
    execFileSync('python3', ['-c', `import ${module}`], { stdio: 'ignore' });
    return undefined;
  } catch {
    return `python3 -c 'import ${module}' fails`;
  }
}
const noNumpy = pythonLacks('numpy');
const noTorch = pythonLacks('torch');
const noGguf = await tinyGgufUnavailable();

// tiny.onnx: OUTPUT0 = INPUT0 + 1, shape [batch, 1].
const TINY_CONFIG = `backend: "onnxruntime"
max_batch_size: 8
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ 1 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 1 ] }
`;

/** One XGBoost tree (JSON), worked out by hand: f0 < 0.5 ? (f1 < -1 ? 1 : 2) : 3, plus a base score of 10. */
const FOREST = {
  learner: {
    gradient_booster: {
      name: 'gbtree',
      model: {
        tree_info: [0],
        trees: [{ left_children: [1, 3, -1, -1, -1], right_children: [2, 4, -1, -1, -1], split_indices: [0, 1, 0, 0, 0], split_conditions: [0.5, -1, 3, 1, 2], default_left: [1, 0, 0, 0, 0] }],
      },
    },
    learner_model_param: { base_score: '1E1', num_class: '0', num_feature: '2' },
    objective: { name: 'reg:squarederror' },
  },
};
const FOREST_CONFIG = `backend: "fil"
max_batch_size: 8
input [ { name: "input__0" data_type: TYPE_FP32 dims: [ 2 ] } ]
output [ { name: "output__0" data_type: TYPE_FP32 dims: [ 1 ] } ]
parameters { key: "model_type" value { string_value: "xgboost_json" } }
`;

/**
 * Runs an inference on each model the repositories hold and prints the results as JSON.
 * The apps take one JSON argument: { modelRepository, python, torch, llama }, the last
 * three saying which of those models are there. The ESM app leaves the backends to core's
 * registry (it finds the installed packages); the CommonJS app passes them itself.
 */
const INFER_EACH = `
const f32 = (values, shape) => ({ datatype: 'FP32', shape, data: new Float32Array(values) });
const bytes = (text) => ({ datatype: 'BYTES', shape: [1], data: [text] });
// The llamacpp model is decoupled: its answer comes on the response stream (one response, as this one is not streamed).
async function generate(server, model, prompt) {
  const inputs = { text_input: bytes(prompt), sampling_parameters: bytes(JSON.stringify({ temperature: 0, max_tokens: 4, ignore_eos: true })) };
  const responses = [];
  for await (const { outputs } of server.inferStream(model, { inputs })) {
    responses.push({ text: String(outputs.text_output.data[0]), finish_reason: String(outputs.finish_reason.data[0]), num_output_tokens: Array.from(outputs.num_output_tokens.data) });
  }
  return responses;
}
async function inferEach(server, models) {
  const read = async (model, inputs) => Object.fromEntries(Object.entries((await server.infer(model, { inputs })).outputs).map(([name, t]) => [name, Array.from(t.data)]));
  const results = { tiny: await read('tiny', { INPUT0: f32([1, 2], [2, 1]) }), forest: await read('forest', { input__0: f32([0.4, -2, 0.5, 0], [2, 2]) }) };
  if (models.python) results.python = await read('py_add_sub', { INPUT0: f32([1, 2, 3, 4], [4]), INPUT1: f32([1, 1, 1, 1], [4]) });
  if (models.torch) results.torch = await read('add_sub', { INPUT__0: f32([1, 2, 3, 4], [1, 4]), INPUT__1: f32([1, 1, 1, 1], [1, 4]) });
  if (models.llama) results.llama = await generate(server, 'tiny_llama', 'Hello');
  return results;
}
`;

const ESM_APP = `import * as core from '@tritium/core';
import * as backend from '@tritium/core/backend';
import { DynamicBatcher } from '@tritium/batcher';
import { startHttpFrontend } from '@tritium/frontend';
${INFER_EACH}
const models = JSON.parse(process.argv[2]);
const server = await core.InferenceServer.start({ modelRepository: models.modelRepository });
console.log(JSON.stringify(await inferEach(server, models)));
console.log(core.InferenceError === backend.InferenceError, core.dataTypeFromConfig === backend.dataTypeFromConfig, typeof backend.gatherBatchInput, 'toTensor' in core || 'toTensor' in backend, typeof DynamicBatcher, typeof startHttpFrontend);
await server.stop();
`;

const CJS_APP = `const core = require('@tritium/core');
const backend = require('@tritium/core/backend');
const { onnxBackend } = require('@tritium/backend-onnx');
const { pythonBackend } = require('@tritium/backend-python');
const { filBackend } = require('@tritium/backend-fil');
const { pytorchBackend } = require('@tritium/backend-pytorch');
const { llamacppBackend } = require('@tritium/backend-llamacpp');
const { DynamicBatcher } = require('@tritium/batcher');
const { startHttpFrontend } = require('@tritium/frontend');
${INFER_EACH}
(async () => {
  const models = JSON.parse(process.argv[2]);
  const backends = [onnxBackend(), pythonBackend(), filBackend(), pytorchBackend(), llamacppBackend()];
  const server = await core.InferenceServer.start({ modelRepository: models.modelRepository, backends });
  console.log(JSON.stringify(await inferEach(server, models)));
  console.log(core.InferenceError === backend.InferenceError, core.dataTypeFromConfig === backend.dataTypeFromConfig, typeof backend.gatherBatchInput, 'toTensor' in core || 'toTensor' in backend, typeof DynamicBatcher, typeof startHttpFrontend);
  await server.stop();
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
`;

// The same source, read as CommonJS (.ts in a package without "type": "module"), as ESM (.mts), and with bundler resolution.
const CONSUMER = `import { InferenceError, InferenceServer, type InferResponse } from '@tritium/core';
import { gatherBatchInput, type Backend } from '@tritium/core/backend';
import { DynamicBatcher, type DynamicBatcherOptions } from '@tritium/batcher';
import { onnxBackend } from '@tritium/backend-onnx';
import { pythonBackend, type PythonBackendOptions } from '@tritium/backend-python';
import { pytorchBackend } from '@tritium/backend-pytorch';
import { filBackend, type ModelType } from '@tritium/backend-fil';
import { llamacppBackend, parseSamplingParameters, type FinishReason, type SamplingParameters } from '@tritium/backend-llamacpp';
import { startHttpFrontend, type HttpFrontendOptions, type RunningFrontend } from '@tritium/frontend';

/** A backend written against the backend face: OUTPUT0 is INPUT0. */
export const echo: Backend = {
  name: 'echo',
  createModel: async () => ({
    createInstance: async () => ({ execute: async (requests) => requests.map((request) => ({ OUTPUT0: gatherBatchInput([request], 'INPUT0') })) }),
  }),
};

export const backends: Backend[] = [onnxBackend(), pythonBackend({} satisfies PythonBackendOptions), pytorchBackend(), filBackend(), llamacppBackend(), echo];
export const forestType: ModelType = 'xgboost_json';
export const greedy: SamplingParameters = parseSamplingParameters({ temperature: 0, max_tokens: 4 });
export const batcher = (options: DynamicBatcherOptions) => new DynamicBatcher(options);

export async function serve(modelRepository: string, http: HttpFrontendOptions): Promise<RunningFrontend> {
  const server = await InferenceServer.start({ modelRepository, backends });
  return startHttpFrontend(server, http);
}

export async function infer(server: InferenceServer): Promise<InferResponse> {
  return server.infer('tiny', { inputs: { INPUT0: { datatype: 'FP32', shape: [1, 1], data: new Float32Array(1) } } });
}

/** A generation's text and why it ended, read from the decoupled model's responses. */
export async function generate(server: InferenceServer, prompt: string): Promise<{ text: string; finishReason: FinishReason }> {
  let text = '';
  let finishReason: FinishReason = 'length';
  for await (const { outputs } of server.inferStream('tiny_llama', { inputs: { text_input: { datatype: 'BYTES', shape: [1], data: [prompt] } } })) {
    text += String(outputs.text_output!.data[0]);
    if (outputs.finish_reason?.data[0] === 'stop') finishReason = 'stop';
  }
  return { text, finishReason };
}

export const code = (error: unknown): string | undefined => (error instanceof InferenceError ? error.code : undefined);
`;

const COMPILER = { target: 'es2022', strict: true, noEmit: true, types: ['node'], skipLibCheck: false };
const TSCONFIGS = {
  'tsconfig.node16.json': { compilerOptions: { ...COMPILER, module: 'node16', moduleResolution: 'node16' }, files: ['consumer-cjs.ts', 'consumer-esm.mts'] },
  'tsconfig.bundler.json': { compilerOptions: { ...COMPILER, module: 'esnext', moduleResolution: 'bundler' }, files: ['consumer-bundler.ts'] },
};

describe('every package, packed and installed with npm', () => {
  it('serves an inference through each backend from ESM, CommonJS and the tritium bin, and type-checks as node16 and bundler consumers', async (context) => {
    const registry = await npmRegistryProblem();
    if (registry) {
      context.skip(`the npm registry cannot be reached (${registry})`);
    }
    for (const [what, why] of [['the Python backend', noNumpy], ['the PyTorch backend', noTorch], ['the llama.cpp backend', noGguf]] as const) {
      if (why) console.log(`packages test: ${what}'s inference is left out: ${why}`);
    }
    const work = await mkdtemp(join(tmpdir(), 'tritium-packages-'));
    try {
      const pnpm = ['-y', manifest.packageManager];
      await run('npx', [...pnpm, 'run', 'build'], { cwd: root });
      const tarballs = join(work, 'tarballs');
      await run('npx', [...pnpm, ...PACKAGES.flatMap((name) => ['--filter', name]), 'pack', '--pack-destination', tarballs], { cwd: root });
      const packed = (await readdir(tarballs)).map((file) => join(tarballs, file));
      expect(packed).toHaveLength(PACKAGES.length);

      const app = join(work, 'app');
      await mkdir(app);
      await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'tritium-packages-app', private: true }));
      // onnxruntime-node's install script downloads GPU binaries; the CPU ones ship in the package.
      // node-llama-cpp's would try its prebuilt binaries and, failing those, download and build
      // llama.cpp; the backend uses only the prebuilt CPU binary, so the script is skipped.
      await run('npm', ['install', '--no-audit', '--no-fund', ...packed, `@types/node@${manifest.devDependencies['@types/node']}`], {
        cwd: app,
        env: { ...process.env, ONNXRUNTIME_NODE_INSTALL: 'skip', NODE_LLAMA_CPP_SKIP_DOWNLOAD: 'true' },
        maxBuffer: 64 * 2 ** 20,
      });

      const models = { python: !noNumpy, torch: !noTorch, llama: !noGguf };
      const repository = await modelRepository(join(work, 'models'), models);
      const modelRepositories = models.torch ? [repository, await torchRepository(join(work, 'torch'))] : repository;
      const expected = {
        tiny: { OUTPUT0: [2, 3] },
        forest: { output__0: [11, 13] },
        ...(models.python && { python: { OUTPUT0: [2, 3, 4, 5], OUTPUT1: [0, 1, 2, 3] } }),
        ...(models.torch && { torch: { OUTPUT__0: [2, 3, 4, 5], OUTPUT__1: [0, 1, 2, 3] } }),
        // Random weights: the text is only known to lead with the prompt (not excluded when not streaming).
        ...(models.llama && { llama: [{ text: expect.stringMatching(/^Hello/), finish_reason: 'length', num_output_tokens: [4] }] }),
      };
      const faces = 'true true function false function function';
      await writeFile(join(app, 'esm.mjs'), ESM_APP);
      await writeFile(join(app, 'cjs.cjs'), CJS_APP);
      const generated: string[] = [];
      for (const file of ['esm.mjs', 'cjs.cjs']) {
        const [results, checks] = (await run(process.execPath, [file, JSON.stringify({ modelRepository: modelRepositories, ...models })], { cwd: app })).stdout.trim().split('\n');
        const parsed = JSON.parse(results!) as { llama?: Array<{ text: string }> };
        expect(parsed, file).toEqual(expected);
        expect(checks, file).toBe(faces);
        if (parsed.llama) generated.push(parsed.llama[0]!.text);
      }
      // Greedy decoding: the registry's backend and the passed one write the same text.
      if (models.llama) expect(generated[0]).toBe(generated[1]);

      await expect(servedOverHttp(join(app, 'node_modules', '.bin', 'tritium'), repository)).resolves.toEqual({ ready: 200, outputs: [2, 3] });

      await writeFile(join(app, 'consumer-cjs.ts'), CONSUMER);
      await writeFile(join(app, 'consumer-esm.mts'), CONSUMER);
      await writeFile(join(app, 'consumer-bundler.ts'), CONSUMER);
      const tsc = fromRoot.resolve('typescript/bin/tsc');
      for (const [file, tsconfig] of Object.entries(TSCONFIGS)) {
        await writeFile(join(app, file), JSON.stringify(tsconfig));
        const checked = await run(process.execPath, [tsc, '-p', file], { cwd: app }).then(
          () => '',
          (error: { stdout: string }) => error.stdout,
        );
        expect(checked, file).toBe('');
      }
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }, 900_000);
});

/** A repository with the ONNX and FIL models, and the Python and llama.cpp ones when they can be had. */
async function modelRepository(path: string, { python, llama }: { python: boolean; llama: boolean }): Promise<string> {
  const version = (model: string) => join(path, model, '1');
  await mkdir(version('tiny'), { recursive: true });
  await writeFile(join(path, 'tiny', 'config.pbtxt'), TINY_CONFIG);
  await cp(join(root, 'packages/backend-onnx/models/tiny.onnx'), join(version('tiny'), 'model.onnx'));
  await mkdir(version('forest'), { recursive: true });
  await writeFile(join(path, 'forest', 'config.pbtxt'), FOREST_CONFIG);
  await writeFile(join(version('forest'), 'xgboost.json'), JSON.stringify(FOREST));
  // Triton's add_sub example as a Python model; its config names no model, so the directory's name is its name.
  if (python) await cp(join(root, 'packages/backend-python/test/models/add_sub'), join(path, 'py_add_sub'), { recursive: true });
  // A tiny random Llama written by gguf's Python package, one sequence at a time (parallel 1) to keep its context small.
  if (llama) await makeTinyLlamaModel(path, { engine: { parallel: 1 } });
  return path;
}

/** The PyTorch backend's test repository, written with torch (its `add_sub` is the model used). */
async function torchRepository(path: string): Promise<string> {
  await run('python3', [join(root, 'packages/backend-pytorch/test/make_repository.py'), path]);
  return path;
}

/** Starts `tritium serve` on free ports, asks HTTP for readiness and the tiny model's answer, then stops it with SIGTERM. */
async function servedOverHttp(bin: string, repository: string): Promise<{ ready: number; outputs: number[] }> {
  const child = spawn(bin, ['serve', '--model-repository', repository, '--http-port', '0', '--grpc-port', '0', '--metrics-port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const port = new Promise<number>((resolve, reject) => {
    const read = (chunk: Buffer) => {
      log += chunk.toString();
      const started = /Started HTTPService at [^\s]*:(\d+)/.exec(log);
      if (started) resolve(Number(started[1]));
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.on('exit', (code) => reject(new Error(`tritium exited with ${code} before serving HTTP:\n${log}`)));
  });
  try {
    const base = `http://127.0.0.1:${await port}`;
    const ready = (await fetch(`${base}/v2/health/ready`)).status;
    const body = { inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [2, 1], data: [1, 2] }] };
    const answer = (await (await fetch(`${base}/v2/models/tiny/infer`, { method: 'POST', body: JSON.stringify(body) })).json()) as { outputs: Array<{ data: number[] }> };
    return { ready, outputs: answer.outputs[0]!.data };
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  }
}

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
