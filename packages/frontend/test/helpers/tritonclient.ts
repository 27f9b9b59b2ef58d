/**
 * Triton's own Python client library (`tritonclient`), built as Triton's users get it, and
 * `tritium serve` on Triton's example models, for tritonclient-conformance.test.ts.
 *
 * The library comes from ../shared/conformance/tritonclient (see its README): the package is
 * copied, its gRPC modules are generated from ../shared/conformance/protocol with grpcio-tools
 * and renamed as its build_wheel.py does, and the result is put on PYTHONPATH. Its HTTP client
 * needs geventhttpclient and python-rapidjson, which the local pip index lacks: Debian's
 * python3-geventhttpclient / python3-rapidjson are used, by appending Debian's dist-packages
 * to sys.path in a sitecustomize.py (appended, so the interpreter's own numpy/grpc/protobuf win).
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { copyFile, cp, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

export const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const CONFORMANCE = join(ROOT, '..', 'shared', 'conformance');
const LIBRARY = join(CONFORMANCE, 'tritonclient', 'src', 'python', 'library', 'tritonclient');
const PROTOCOL = join(CONFORMANCE, 'protocol');
/** Triton's example repository: its config.pbtxt files (the models are our generated stand-ins). */
const EXAMPLE_CONFIGS = join(CONFORMANCE, 'triton-server', 'docs', 'examples', 'model_repository');
const REPEAT_CONFIG = join(CONFORMANCE, 'triton-server', 'src', 'test', 'models', 'repeat_int32', 'config.pbtxt');
const EXAMPLE_MODELS = join(ROOT, 'packages', 'backend-onnx', 'models', 'triton-examples');
export const DRIVERS = fileURLToPath(new URL('./tritonclient/', import.meta.url));
const DEBIAN_PACKAGES = '/usr/lib/python3/dist-packages';

const python = (code: string, env: NodeJS.ProcessEnv = process.env) => execFileSync('python3', ['-c', code], { stdio: 'pipe', env, timeout: 60_000 });

/** Why the test cannot run here, or undefined when it can. */
export const tritonclientMissing: string | undefined = (() => {
  if (!existsSync(LIBRARY) || !existsSync(PROTOCOL) || !existsSync(EXAMPLE_CONFIGS)) return `Triton's client library or example configs are not in ${CONFORMANCE}`;
  try {
    python('import numpy, grpc, grpc_tools.protoc, google.protobuf, packaging');
  } catch {
    return 'python3 with numpy, grpcio, grpcio-tools, protobuf and packaging is not available';
  }
  try {
    python(`import sys; sys.path.append(${JSON.stringify(DEBIAN_PACKAGES)}); import rapidjson, geventhttpclient`);
  } catch {
    return "Debian's python3-geventhttpclient / python3-rapidjson are not installed (tritonclient needs them)";
  }
  return undefined;
})();

/** Builds the library under `dir`; returns the directory to put on PYTHONPATH. */
export async function buildTritonClient(dir: string): Promise<string> {
  const site = join(dir, 'site');
  const generated = join(dir, 'generated');
  await mkdir(generated, { recursive: true });
  await cp(LIBRARY, join(site, 'tritonclient'), { recursive: true });
  await promisify(execFile)('python3', ['-m', 'grpc_tools.protoc', `-I${PROTOCOL}`, `--python_out=${generated}`, `--grpc_python_out=${generated}`, 'grpc_service.proto', 'model_config.proto'], { timeout: 60_000 });
  // build_wheel.py's renames, and its rewrite of protoc's imports into the package.
  const into = (pattern: RegExp) => (text: string) => text.replace(pattern, 'from tritonclient.grpc import $1_pb2 as $2');
  const plain = into(/^import ([^ \n]*)_pb2 as ([^ \n]*)$/gm);
  const renames: [string, string, (text: string) => string][] = [
    ['model_config_pb2.py', 'model_config_pb2.py', plain],
    ['grpc_service_pb2.py', 'service_pb2.py', plain],
    ['grpc_service_pb2_grpc.py', 'service_pb2_grpc.py', into(/^import grpc_([^ \n]*)_pb2 as ([^ \n]*)$/gm)],
  ];
  for (const [from, to, rewrite] of renames) {
    await writeFile(join(site, 'tritonclient', 'grpc', to), rewrite(await readFile(join(generated, from), 'utf8')));
  }
  await writeFile(join(site, 'sitecustomize.py'), `import sys\n\nsys.path.append(${JSON.stringify(DEBIAN_PACKAGES)})\n`);
  return site;
}

/** simple_identity's model.py: OUTPUT0 = INPUT0 (Triton ships one that does the same). */
const IDENTITY_MODEL = `import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return [
            pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy())])
            for r in requests
        ]
`;

/** A decoupled model for Triton's repeat_int32 config: one response per element of IN
 * (OUT = IN[i], IDX = i, after DELAY[i] ms), then, after WAIT ms, the final flag alone. */
const REPEAT_MODEL = `import time

import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        for request in requests:
            sender = request.get_response_sender()
            values = pb_utils.get_input_tensor_by_name(request, "IN").as_numpy().reshape(-1)
            delays = pb_utils.get_input_tensor_by_name(request, "DELAY").as_numpy().reshape(-1)
            wait = pb_utils.get_input_tensor_by_name(request, "WAIT").as_numpy().reshape(-1)
            for i, value in enumerate(values):
                time.sleep(float(delays[i]) / 1000 if i < len(delays) else 0)
                sender.send(pb_utils.InferenceResponse([
                    pb_utils.Tensor("OUT", np.array([value], dtype=np.int32)),
                    pb_utils.Tensor("IDX", np.array([i], dtype=np.uint32)),
                ]))
            time.sleep(float(wait[0]) / 1000 if len(wait) else 0)
            sender.send(flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        return None
`;

/** simple_string_dyna_sequence's model.py: Triton's QA (L0_grpc/test.sh) serves simple_dyna_sequence's config with
 * CORRID as TYPE_STRING from its C++ dyna_sequence test backend (server src/test/dyna_sequence); this does the same in
 * Python. Each instance keeps an INT32 accumulator per correlation id (a sequence stays on one instance): START sets it
 * to the sum of INPUT, a later step adds that sum, END adds the id (truncated to 32 bits) and forgets it; OUTPUT is the
 * accumulator, in INPUT's shape. The string id must start with an integer (C++ std::stoi), else INVALID_ARG. */
const STRING_DYNA_SEQUENCE_MODEL = `import json
import re
import time

import numpy as np
import triton_python_backend_utils as pb_utils


def int32(value):
    return (value + 2**31) % 2**32 - 2**31


class TritonPythonModel:
    def initialize(self, args):
        parameters = json.loads(args["model_config"]).get("parameters", {})
        self.delay_s = int(parameters.get("execute_delay_ms", {}).get("string_value", "0")) / 1000
        self.accumulator = {}

    def execute(self, requests):
        time.sleep(self.delay_s)
        return [self.step(request) for request in requests]

    def step(self, request):
        def get(name):
            return pb_utils.get_input_tensor_by_name(request, name).as_numpy()

        start, end, ready = (int(get(name).reshape(-1)[0]) for name in ("START", "END", "READY"))
        corrid = get("CORRID").reshape(-1)[0]
        match = re.match(rb"\\s*[+-]?\\d+", corrid if isinstance(corrid, bytes) else str(corrid).encode())
        if match is None:
            return pb_utils.InferenceResponse(
                error=pb_utils.TritonError("dyna sequence backend expects correlation ID to be decodable into an integer", pb_utils.TritonError.INVALID_ARG)
            )
        corrid = int(match.group(0))
        values = get("INPUT")
        if not ready:
            return pb_utils.InferenceResponse([])
        total = int(values.astype(np.int64).sum())
        self.accumulator[corrid] = int32(total if start else self.accumulator.get(corrid, 0) + total)
        if end:
            self.accumulator[corrid] = int32(self.accumulator[corrid] + int32(corrid))
        output = np.full(values.shape, self.accumulator[corrid], dtype=np.int32)
        if end:
            del self.accumulator[corrid]
        return pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT", output)])
`;

const ONNX_EXAMPLES = ['simple', 'simple_int8', 'simple_string', 'simple_sequence', 'simple_dyna_sequence', 'densenet_onnx'];

/** Triton's example repository at `root`: Triton's configs, our generated models, and repeat_int32
 * (Triton's config for its C++ repeat backend, served by a Python model here). */
export async function exampleRepository(root: string, models = [...ONNX_EXAMPLES, 'simple_identity', 'repeat_int32', 'simple_string_dyna_sequence']): Promise<string> {
  for (const model of models) {
    await mkdir(join(root, model, '1'), { recursive: true });
    if (model === 'simple_string_dyna_sequence') {
      // As Triton's L0_grpc/test.sh makes it from simple_dyna_sequence's config, with backend "python" for "dyna_sequence".
      const config = (await readFile(join(EXAMPLE_CONFIGS, 'simple_dyna_sequence', 'config.pbtxt'), 'utf8'))
        .replace(/simple_dyna_sequence/g, model)
        .replace(/^platform: .*$/m, 'backend: "python"')
        .replace(/(CONTROL_SEQUENCE_CORRID\n\s*)data_type:.*/, '$1data_type: TYPE_STRING');
      await writeFile(join(root, model, 'config.pbtxt'), config);
      await writeFile(join(root, model, '1', 'model.py'), STRING_DYNA_SEQUENCE_MODEL);
      continue;
    }
    if (model === 'repeat_int32') {
      const config = (await readFile(REPEAT_CONFIG, 'utf8')).replace(/backend:\s*"repeat"/, 'backend: "python"');
      await writeFile(join(root, model, 'config.pbtxt'), config);
      await writeFile(join(root, model, '1', 'model.py'), REPEAT_MODEL);
      continue;
    }
    await copyFile(join(EXAMPLE_CONFIGS, model, 'config.pbtxt'), join(root, model, 'config.pbtxt'));
    if (model === 'simple_identity') await writeFile(join(root, model, '1', 'model.py'), IDENTITY_MODEL);
    else await copyFile(join(EXAMPLE_MODELS, `${model}.onnx`), join(root, model, '1', 'model.onnx'));
    if (model === 'densenet_onnx') await copyFile(join(EXAMPLE_MODELS, 'densenet_labels.txt'), join(root, model, 'densenet_labels.txt'));
  }
  return root;
}

/** `tritium serve` as a child process (as cli-serve.test.ts runs it), on free loopback ports. */
export class TritiumServe {
  private output = '';
  readonly child: ChildProcess;
  readonly exited: Promise<unknown>;

  constructor(args: string[]) {
    const loopback = ['--http-address=127.0.0.1', '--grpc-address=127.0.0.1', '--http-port=0', '--grpc-port=0', '--metrics-port=0'];
    this.child = spawn(process.execPath, ['--import', 'tsx', 'packages/frontend/src/cli/main.ts', 'serve', ...loopback, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    for (const stream of [this.child.stdout!, this.child.stderr!]) stream.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.exited = once(this.child, 'exit');
  }

  get text(): string {
    return this.output;
  }

  private async waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpMatchArray> {
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline) {
      const match = this.output.match(pattern);
      if (match) return match;
      if (this.child.exitCode !== null || this.child.signalCode !== null) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`no ${pattern} in tritium serve's output:\n${this.output}`);
  }

  /** `host:port` of the HTTP and gRPC services, once both have started. */
  async addresses(timeoutMs = 120_000): Promise<{ http: string; grpc: string }> {
    const port = async (service: string) => (await this.waitFor(new RegExp(`Started ${service} at 127\\.0\\.0\\.1:(\\d+)`), timeoutMs))[1];
    return { http: `127.0.0.1:${await port('HTTPService')}`, grpc: `127.0.0.1:${await port('GRPCInferenceService')}` };
  }

  /** SIGTERM (the server unloads its models and stops its Python stubs), SIGKILL to the group after 20 s. */
  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => {
      try {
        process.kill(-this.child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    }, 20_000);
    await this.exited;
    clearTimeout(timer);
  }
}

/** Runs a driver under helpers/tritonclient/ and parses the one JSON line it prints. */
export async function runDriver(site: string, script: string, args: string[], timeoutMs = 120_000): Promise<Record<string, any>> {
  const env = { ...process.env, PYTHONPATH: site, PYTHONDONTWRITEBYTECODE: '1' };
  const { stdout, stderr } = await promisify(execFile)('python3', [join(DRIVERS, script), ...args], { env, timeout: timeoutMs, maxBuffer: 16 << 20 }).catch((error) => {
    throw new Error(`${script} failed: ${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`);
  });
  const line = stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(line);
  } catch {
    throw new Error(`${script} printed no JSON line:\n${stdout}\n${stderr}`);
  }
}
