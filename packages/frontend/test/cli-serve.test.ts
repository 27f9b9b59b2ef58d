import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { VERSION } from '@tritium/core';
import { filConfig } from '../../backend-fil/test/helpers.js';
import { pythonMissing } from '../../backend-python/test/helpers.js';
import { GrpcClient } from './helpers/grpc-fixture.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const MAIN = 'packages/frontend/src/cli/main.ts';
const ADD_SUB = fileURLToPath(new URL('../../backend-onnx/models/add_sub.onnx', import.meta.url));
/** Every service on a free loopback port. */
const LOOPBACK = ['--http-address=127.0.0.1', '--grpc-address=127.0.0.1', '--http-port=0', '--grpc-port=0', '--metrics-port=0'];
/** How long the slow Python model sleeps in execute(). */
const SLOW_MS = 2_000;

/** The command run as a child process, as `tritium` would run: its output kept, its exit awaited. */
class Cli {
  private output = '';
  readonly exited: Promise<number | null>;

  constructor(readonly child: ChildProcess) {
    for (const stream of [child.stdout!, child.stderr!]) stream.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.exited = once(child, 'exit').then(([code]) => code as number | null);
  }

  get text(): string {
    return this.output;
  }

  /** Waits for the output to match `pattern`; fails with the output so far if the command exits first or takes too long. */
  async waitFor(pattern: RegExp, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline) {
      const match = this.output.match(pattern);
      if (match) return match;
      if (this.child.exitCode !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no ${pattern} in the command's output:\n${this.output}`);
  }

  /** The base URLs of the services, from their `Started ...` lines. */
  async services(): Promise<{ http: string; metrics: string; grpcPort: number }> {
    const port = async (service: string) => Number((await this.waitFor(new RegExp(`Started ${service} at 127\\.0\\.0\\.1:(\\d+)`)))[1]);
    return { grpcPort: await port('GRPCInferenceService'), http: `http://127.0.0.1:${await port('HTTPService')}`, metrics: `http://127.0.0.1:${await port('Metrics Service')}` };
  }
}

const running: Cli[] = [];

function tritium(...args: string[]): Cli {
  return tritiumWith(process.env, ...args);
}

function tritiumWith(env: NodeJS.ProcessEnv, ...args: string[]): Cli {
  // A process group of its own, as a terminal gives a command: a signal may go to the whole group.
  const cli = new Cli(spawn(process.execPath, ['--import', 'tsx', MAIN, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true }));
  running.push(cli);
  return cli;
}

afterEach(async () => {
  for (const cli of running.splice(0)) {
    if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill('SIGKILL');
    await cli.exited;
  }
});

let repository: string;

beforeAll(async () => {
  repository = await mkdtemp(join(tmpdir(), 'tritium-cli-'));
});

afterAll(async () => {
  await rm(repository, { recursive: true, force: true });
});

/** A model repository of its own for one test, under the suite's temp directory. */
async function models(name: string, files: Record<string, string | { copy: string }>): Promise<string> {
  const root = join(repository, name);
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(root, path, '..'), { recursive: true });
    if (typeof content === 'string') await writeFile(join(root, path), content);
    else await copyFile(content.copy, join(root, path));
  }
  return root;
}

const addSub = { 'add_sub/config.pbtxt': 'backend: "onnxruntime"\n', 'add_sub/1/model.onnx': { copy: ADD_SUB } };

/** A FIL model of one tree, XGBoost JSON worked out by hand: f0 < 0.5 ? (f1 < -1 ? 1 : 2) : 3, plus base_score 10. */
const forest = (parameters: Record<string, string> = {}) => {
  const tree = {
    learner: {
      gradient_booster: { name: 'gbtree', model: { tree_info: [0], trees: [{ left_children: [1, 3, -1, -1, -1], right_children: [2, 4, -1, -1, -1], split_indices: [0, 1, 0, 0, 0], split_conditions: [0.5, -1, 3, 1, 2], default_left: [1, 0, 0, 0, 0] }] } },
      learner_model_param: { base_score: '1E1', num_class: '0', num_feature: '2' },
      objective: { name: 'reg:squarederror' },
    },
  };
  return { 'forest/config.pbtxt': filConfig({ name: 'forest', modelType: 'xgboost_json', features: 2, outputWidth: 1, parameters }), 'forest/1/xgboost.json': JSON.stringify(tree) };
};

/** A Python model that touches `marker` when execute() starts, sleeps SLOW_MS, then answers OUTPUT0 = INPUT0. */
const slowModel = (marker: string) => ({
  'slow/config.pbtxt': `backend: "python"
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] }
instance_group { count: 1 kind: KIND_CPU }
`,
  'slow/1/model.py': `import time
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        open(${JSON.stringify(marker)}, "w").close()
        time.sleep(${SLOW_MS / 1000})
        return [
            pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy())])
            for r in requests
        ]
`,
});

/** A Python model that logs a numbered line at pb_utils.Logger's INFO, WARNING and VERBOSE on each execute(), and answers OUTPUT0 = INPUT0. */
const talkerModel = {
  'talker/config.pbtxt': `backend: "python"
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ 4 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ 4 ] }
instance_group { count: 1 kind: KIND_CPU }
`,
  'talker/1/model.py': `import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    calls = 0

    def execute(self, requests):
        self.calls += 1
        logger = pb_utils.Logger
        logger.log_info("info %d" % self.calls)
        logger.log("verbose %d" % self.calls, logger.VERBOSE)
        logger.log_warn("warn %d" % self.calls)
        return [
            pb_utils.InferenceResponse(output_tensors=[pb_utils.Tensor("OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy())])
            for r in requests
        ]
`,
};

const slowRequest = JSON.stringify({ inputs: [{ name: 'INPUT0', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] }] });
const infer = (http: string, model: string, body: string) => fetch(`${http}/v2/models/${model}/infer`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
const status = async (url: string) => (await fetch(url)).status;
/** An HTTP inference answer: outputs, or Triton's error. */
const body = async (response: Response) => (await response.json()) as { outputs?: Array<{ data: number[] }>; error?: string };

/** Processes still running whose command line names `text` (the Python stubs of a repository, say). */
function processesNaming(text: string): string[] {
  try {
    return execFileSync('pgrep', ['-af', text], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/** The command serving the slow model, with one request executing in it (its answer still to come). */
async function slowRequestInFlight(name: string, ...args: string[]): Promise<{ cli: Cli; root: string; http: string; inFlight: Promise<Response | Error> }> {
  const marker = join(repository, `${name}.executing`);
  const root = await models(name, slowModel(marker));
  const cli = tritium('serve', `--model-repository=${root}`, ...LOOPBACK, ...args);
  const { http } = await cli.services();
  // Settled as a value, so that a connection ending early is the test's to check, not an unhandled rejection.
  const inFlight = infer(http, 'slow', slowRequest).catch((error: Error) => error);
  await expect.poll(() => existsSync(marker), { timeout: 30_000, interval: 20 }).toBe(true);
  return { cli, root, http, inFlight };
}

describe('tritium', () => {
  it('prints its usage and version, and exits 2 on a command line it cannot run', async () => {
    const help = tritium('--help');
    expect(await help.exited).toBe(0);
    expect(help.text).toMatch(/^Usage: tritium serve --model-repository <path>/);
    const version = tritium('--version');
    expect(await version.exited).toBe(0);
    expect(version.text).toBe(`tritium ${VERSION}\n`);
    const bad = tritium('serve', '--model-repository=/models', '--grpc-use-ssl-mutual=true');
    expect(await bad.exited).toBe(2);
    expect(bad.text).toContain('tritium: --grpc-use-ssl-mutual=true is not supported by tritium (only false)');
  });

  it('serves an ONNX model over HTTP, gRPC and metrics, then exits 0 on SIGTERM', async () => {
    const cli = tritium('serve', `--model-repository=${await models('onnx', addSub)}`, ...LOOPBACK, '--http-thread-count=4');
    const { http, metrics, grpcPort } = await cli.services();
    expect(cli.text).toContain('--http-thread-count is ignored by tritium: requests are handled on the Node.js event loop');
    expect(cli.text).toMatch(/\| add_sub \| 1 +\| READY +\|/);
    expect(await status(`${http}/v2/health/ready`)).toBe(200);
    const request = JSON.stringify({
      inputs: ['INPUT0', 'INPUT1'].map((name, i) => ({ name, datatype: 'FP32', shape: [1, 16], data: Array.from({ length: 16 }, (_, j) => j * (i + 1)) })),
      outputs: [{ name: 'OUTPUT0' }],
    });
    const response = await infer(http, 'add_sub', request);
    expect(response.status).toBe(200);
    expect((await body(response)).outputs![0]!.data).toEqual(Array.from({ length: 16 }, (_, j) => 3 * j));
    const grpc = new GrpcClient(grpcPort);
    try {
      expect(await grpc.call('ServerReady')).toEqual({ ready: true });
    } finally {
      grpc.close();
    }
    expect(await (await fetch(`${metrics}/metrics`)).text()).toContain('nv_inference_request_success{model="add_sub",version="1"} 1');

    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
    expect(cli.text).toContain('Signal (15) received.');
    expect(cli.text).toContain("successfully unloaded 'add_sub' version 1");
    await expect(fetch(`${http}/v2/health/live`)).rejects.toThrow();
  });

  it.skipIf(pythonMissing)('drains on SIGTERM to its process group: readiness fails at once, new requests are refused, the request in flight completes (its stub ignores the signal), then it exits 0', async () => {
    const { cli, root, http, inFlight } = await slowRequestInFlight('drain');
    process.kill(-cli.child.pid!, 'SIGTERM');
    await cli.waitFor(/Signal \(15\) received\./);
    expect(await status(`${http}/v2/health/ready`)).toBe(400);
    expect(await status(`${http}/v2/health/live`)).toBe(400);
    const refused = await infer(http, 'slow', slowRequest);
    expect(refused.status).toBe(503);
    expect((await body(refused)).error).toContain('stopping');
    const answered = (await inFlight) as Response;
    expect(answered.status).toBe(200);
    expect((await body(answered)).outputs![0]!.data).toEqual([1, 2, 3, 4]);
    expect(await cli.exited).toBe(0);
    expect(processesNaming(root)).toEqual([]);
  });

  it.skipIf(pythonMissing)('answers a request still running at --exit-timeout-secs with 503, and exits 0', async () => {
    const { cli, root, inFlight } = await slowRequestInFlight('timeout', '--exit-timeout-secs=0');
    cli.child.kill('SIGTERM');
    const answered = (await inFlight) as Response;
    expect(answered.status).toBe(503);
    expect((await body(answered)).error).toContain("model 'slow'");
    expect(await cli.exited).toBe(0);
    expect(processesNaming(root)).toEqual([]);
  });

  it.skipIf(pythonMissing)('exits 1 at once on a second signal, leaving no stub process behind', async () => {
    const { cli, root, inFlight } = await slowRequestInFlight('second-signal');
    cli.child.kill('SIGINT');
    await cli.waitFor(/Signal \(2\) received\./);
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(1);
    expect(cli.text).toContain('Signal (15) received again: exiting now');
    // Its connection ends unanswered: the command did not wait for the drain.
    expect(await inFlight).toBeInstanceOf(Error);
    await expect.poll(() => processesNaming(root), { timeout: 10_000 }).toEqual([]);
    expect(readdirSync('/dev/shm').filter((file) => file.startsWith(`tritium-${cli.child.pid}-`))).toEqual([]);
  });

  it("takes Triton's --id, --model-load-thread-count and --backend-config lines, warning of the settings that have no meaning here", async () => {
    const cli = tritium(
      'serve',
      `--model-repository=${await models('triton-flags', addSub)}`,
      ...LOOPBACK,
      '--id=edge-7',
      '--model-load-thread-count=2',
      '--backend-config=onnxruntime,default-max-batch-size=8',
      '--backend-config=python,stub-timeout-seconds=120',
      '--backend-config=python,thread-pool-size=4',
      '--backend-directory=/opt/tritonserver/backends',
    );
    const { http } = await cli.services();
    expect(await (await fetch(`${http}/v2`)).json()).toMatchObject({ name: 'edge-7' });
    // add_sub's inputs are [-1,16]: auto-complete gives it the default-max-batch-size asked for.
    expect(await (await fetch(`${http}/v2/models/add_sub/config`)).json()).toMatchObject({ max_batch_size: 8 });
    expect(cli.text).toContain("--backend-config python,thread-pool-size is ignored by tritium: it has no meaning here (tritium's python backend takes");
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  });

  it('serves a model of any official backend core lists, fil too, loaded by name', async () => {
    const root = await models('fil', forest());
    const cli = tritium('serve', `--model-repository=${root}`, ...LOOPBACK);
    const { http } = await cli.services();
    expect(cli.text).toMatch(/\| forest +\| 1 +\| READY/);
    const response = await fetch(`${http}/v2/models/forest/infer`, {
      method: 'POST',
      body: JSON.stringify({ inputs: [{ name: 'input__0', datatype: 'FP32', shape: [2, 2], data: [0.4, -2, 5, 0] }] }),
    });
    expect(((await response.json()) as { outputs: unknown[] }).outputs[0]).toMatchObject({ name: 'output__0', shape: [2, 1], data: [11, 13] });
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  });

  it('prints Tritium warnings as its warning log lines with their codes, and silences the codes --disable-warning names', async () => {
    // output_class and algo are warned of at load (TRITIUM_W013, TRITIUM_W014).
    const root = await models('warnings', forest({ output_class: 'false', algo: 'ALGO_AUTO' }));
    const env = { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --disable-warning=TRITIUM_W013` };
    const cli = tritiumWith(env, 'serve', `--model-repository=${root}`, ...LOOPBACK);
    await cli.services();
    expect(cli.text).toMatch(/^W\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ tritium\] \[TRITIUM_W014\] model 'forest': parameter 'algo' is accepted but has no effect/m);
    expect(cli.text).not.toContain('TRITIUM_W013');
    // Node's printer would have written `(node:<pid>) [TRITIUM_W014] TritiumWarning: ...`.
    expect(cli.text).not.toContain('TritiumWarning');
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
  });

  it.skipIf(pythonMissing)("starts from its --log-* flags, and /v2/logging changes its own lines and a Python model's at once", async () => {
    const root = await models('logging', talkerModel);
    const cli = tritium('serve', `--model-repository=${root}`, ...LOOPBACK, '--log-verbose=1', '--log-format=ISO8601');
    const { http } = await cli.services();
    const iso = (level: string, message: string) => new RegExp(`^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ ${level} \\d+ tritium\\] ${message}`, 'm');
    expect(cli.text).toMatch(iso('V', "model 'talker' version 1: loading with backend 'python'"));
    expect((await infer(http, 'talker', slowRequest)).status).toBe(200);
    await cli.waitFor(iso('W', "model 'talker': warn 1$"));
    expect(cli.text).toMatch(iso('I', "model 'talker': info 1$"));
    // A Python model's VERBOSE line is a level 1 line, as in Triton.
    expect(cli.text).toMatch(iso('V', "model 'talker': verbose 1$"));

    const changed = await fetch(`${http}/v2/logging`, { method: 'POST', body: '{"log_verbose_level":0,"log_info":false,"log_format":"default"}' });
    expect(await changed.json()).toEqual({ log_file: '', log_info: false, log_warning: true, log_error: true, log_verbose_level: 0, log_format: 'default' });
    expect((await infer(http, 'talker', slowRequest)).status).toBe(200);
    await cli.waitFor(/^W\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ tritium\] model 'talker': warn 2$/m);
    expect(cli.text).not.toMatch(/info 2|verbose 2/);

    await fetch(`${http}/v2/logging`, { method: 'POST', body: '{"log_verbose_level":2,"log_info":true}' });
    expect((await infer(http, 'talker', JSON.stringify({ ...JSON.parse(slowRequest), id: 'third' }))).status).toBe(200);
    await cli.waitFor(/^V.* model 'talker' version 1 request 'third': done$/m);
    expect(cli.text).toMatch(/^I.* model 'talker': info 3$/m);
    cli.child.kill('SIGTERM');
    expect(await cli.exited).toBe(0);
    // The command's own lines follow the settings too.
    expect(cli.text).toMatch(/^I\d{4} .* tritium\] successfully unloaded 'talker' version 1$/m);
  });

  it("refuses --http-max-input-size of 0 or less with Triton's line, once, and serves nothing", async () => {
    for (const size of ['0', '-1024']) {
      const cli = tritium('serve', `--model-repository=${await models('max-input', addSub)}`, ...LOOPBACK, `--http-max-input-size=${size}`);
      expect(await cli.exited).toBe(2);
      expect(cli.text.split('\n').filter((line) => line.includes('Error: --http-max-input-size must be greater than 0.'))).toHaveLength(1);
      expect(cli.text).not.toContain('Started');
    }
  });

  it('exits 1 when a model fails to load, and serves the others with --exit-on-error=false', async () => {
    const root = await models('broken', { ...addSub, 'broken/config.pbtxt': 'max_batch_size: "many"\n', 'broken/1/model.onnx': { copy: ADD_SUB } });
    const failing = tritium('serve', `--model-repository=${root}`, ...LOOPBACK);
    expect(await failing.exited).toBe(1);
    expect(failing.text).toMatch(/failed to start: .*broken/);

    const tolerant = tritium('serve', `--model-repository=${root}`, '--exit-on-error=false', ...LOOPBACK);
    const { http } = await tolerant.services();
    expect(tolerant.text).toMatch(/\| broken +\| [-1] +\| UNAVAILABLE: /);
    // Triton's strict readiness: a model that did not load leaves the server not ready.
    expect(await status(`${http}/v2/health/ready`)).toBe(400);
    expect(await status(`${http}/v2/models/add_sub/ready`)).toBe(200);
    tolerant.child.kill('SIGTERM');
    expect(await tolerant.exited).toBe(0);
  });

  it('exits 1 when its log file cannot be opened', async () => {
    const cli = tritium('serve', '--model-repository=/models', `--log-file=${join(repository, 'missing', 'tritium.log')}`);
    expect(await cli.exited).toBe(1);
    expect(cli.text).toMatch(/^tritium: cannot open --log-file: ENOENT/);
  });

  it('exits 1 naming the service whose port is taken, having stopped the others', async () => {
    const taken = createServer().listen(0, '127.0.0.1');
    await once(taken, 'listening');
    try {
      const port = (taken.address() as { port: number }).port;
      const cli = tritium('serve', `--model-repository=${await models('port', addSub)}`, ...LOOPBACK, `--http-port=${port}`);
      expect(await cli.exited).toBe(1);
      expect(cli.text).toContain('Started GRPCInferenceService');
      expect(cli.text).toMatch(new RegExp(`failed to start: failed to start HTTPService: .*${port}`));
    } finally {
      taken.close();
    }
  });
});
