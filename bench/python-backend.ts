/**
 * The Python backend, measured (issue 8): all in one process, baselines in the same run.
 * 1. An identity model, 1 KB FP32 tensors, one caller: p50/p99 µs per request through
 *    the server, against calling the model's execute() inside Python (the floor).
 * 2. A 64 MB round trip through the same model: GB/s, against Node copying the same
 *    bytes once, into a warm buffer (memcpy) and into a new array (what any call that
 *    returns fresh bytes pays: the kernel maps and zeroes the new pages on first touch).
 * 3. A CPU-bound model (a pure-Python loop, ~2 ms) with 1, 2 and 4 instances under 16
 *    concurrent callers: requests/s and the scaling factor over 1 instance.
 * Rounds alternate and figures are medians over rounds (ROUNDS, default 5).
 * Run: npx -y pnpm@10.34.9 bench:python
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { InferenceServer } from '@tritium/core';
import { pythonBackend } from '@tritium/backend-python';
import { measureLatency, measureRate, median, table } from './measure.js';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const PYTHON_UTILS = fileURLToPath(new URL('../packages/backend-python/python/', import.meta.url));

const IDENTITY = `import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        return [
            pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", pb_utils.get_input_tensor_by_name(r, "INPUT0").as_numpy())])
            for r in requests
        ]
`;
const BUSY = `import numpy as np
import triton_python_backend_utils as pb_utils


class TritonPythonModel:
    def execute(self, requests):
        responses = []
        for r in requests:
            total = 0
            for i in range(60000):  # about 2 ms of pure Python, holding this process's GIL
                total += i * i
            responses.append(pb_utils.InferenceResponse([pb_utils.Tensor("OUTPUT0", np.array([total % 1000], dtype=np.float32))]))
        return responses
`;
const config = (count: number) => `backend: "python"
max_batch_size: 0
input { name: "INPUT0" data_type: TYPE_FP32 dims: [ -1 ] }
output { name: "OUTPUT0" data_type: TYPE_FP32 dims: [ -1 ] }
instance_group { count: ${count} kind: KIND_CPU }`;

const repository = await mkdtemp(join(tmpdir(), 'tritium-bench-python-'));
const models: Record<string, { source: string; count: number }> = {
  identity: { source: IDENTITY, count: 1 },
  busy_1: { source: BUSY, count: 1 },
  busy_2: { source: BUSY, count: 2 },
  busy_4: { source: BUSY, count: 4 },
};
for (const [name, { source, count }] of Object.entries(models)) {
  await mkdir(join(repository, name, '1'), { recursive: true });
  await writeFile(join(repository, name, '1', 'model.py'), source);
  await writeFile(join(repository, name, 'config.pbtxt'), config(count));
}
const server = await InferenceServer.start({ modelRepository: repository, backends: [pythonBackend()] });

try {
  // 1. Per-request cost, 1 KB.
  const small = { inputs: { INPUT0: { datatype: 'FP32' as const, shape: [256], data: new Float32Array(256).fill(1) } } };
  const identity = () => server.infer('identity', small);
  await measureLatency(identity, 2000, 1);
  const floor = pythonFloor(join(repository, 'identity', '1', 'model.py'));
  const latencies = [];
  for (let round = 0; round < ROUNDS; round++) latencies.push(await measureLatency(identity, 3000, 1));
  const p50 = median(latencies.map((l) => l.p50));
  const p99 = median(latencies.map((l) => l.p99));
  console.log('\n1. Identity model, 1 KB FP32, one caller (µs per request)');
  table([
    { path: 'server.infer → Python stub → back', p50, p99, 'over the floor (p50)': p50 - floor.p50 },
    { path: "the model's execute() called in Python (floor)", p50: floor.p50, p99: floor.p99, 'over the floor (p50)': 0 },
  ]);

  // 2. Bandwidth, 64 MB.
  const count = 16 * 1024 * 1024;
  const big = { inputs: { INPUT0: { datatype: 'FP32' as const, shape: [count], data: new Float32Array(count).fill(2) } } };
  const source = Buffer.from(big.inputs.INPUT0.data.buffer);
  const target = Buffer.allocUnsafe(source.length);
  const gbPerSecond = (ms: number) => source.length / (ms / 1000) / 1e9;
  const timings: Record<'roundTrip' | 'warmCopy' | 'freshCopy', number[]> = { roundTrip: [], warmCopy: [], freshCopy: [] };
  const time = async (key: keyof typeof timings, work: () => unknown) => {
    const start = performance.now();
    await work();
    timings[key].push(performance.now() - start);
  };
  await server.infer('identity', big);
  for (let round = 0; round < ROUNDS; round++) {
    await time('roundTrip', () => server.infer('identity', big));
    await time('warmCopy', () => source.copy(target));
    await time('freshCopy', () => new Float32Array(big.inputs.INPUT0.data));
  }
  const ms = (key: keyof typeof timings) => median(timings[key]);
  console.log('\n2. 64 MB FP32 through the identity model (GB/s of tensor bytes)');
  table(
    [
      ['round trip: Node → stub → Node', 'roundTrip'],
      ['Buffer.copy into a warm buffer (memcpy)', 'warmCopy'],
      ['copy into a new Float32Array', 'freshCopy'],
    ].map(([path, key]) => ({
      path: path!,
      'GB/s': gbPerSecond(ms(key as keyof typeof timings)),
      ms: ms(key as keyof typeof timings),
      'round-trip speed / this': ms(key as keyof typeof timings) / ms('roundTrip'),
    })),
  );

  // 3. Scaling with instances.
  const busyRequest = { inputs: { INPUT0: { datatype: 'FP32' as const, shape: [1], data: new Float32Array(1) } } };
  const rates: Record<string, number[]> = { busy_1: [], busy_2: [], busy_4: [] };
  for (const name of Object.keys(rates)) await measureRate(() => server.infer(name, busyRequest), 64, 16);
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of Object.keys(rates)) rates[name]!.push((await measureRate(() => server.infer(name, busyRequest), 400, 16)).requestsPerSecond);
  }
  const one = median(rates.busy_1!);
  console.log('\n3. CPU-bound model (~2 ms of pure Python), 16 concurrent callers');
  table(
    Object.entries(rates).map(([name, values], i) => ({
      instances: [1, 2, 4][i]!,
      'requests/s': median(values),
      'scaling over 1 instance': median(values.map((v, round) => v / rates.busy_1![round]!)),
    })),
  );
  console.log(`(1 instance: ${one.toFixed(0)} requests/s; this machine has 2 cores)`);
} finally {
  await server.stop();
  await rm(repository, { recursive: true, force: true });
}

/** The floor: the model's execute() on one 1 KB request, called in a loop inside Python (µs per call). */
function pythonFloor(modelFile: string): { p50: number; p99: number } {
  const script = `
import importlib.util, json, time
import numpy as np
import triton_python_backend_utils as pb_utils
spec = importlib.util.spec_from_file_location("model", ${JSON.stringify(modelFile)})
module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
model = module.TritonPythonModel()
request = pb_utils.InferenceRequest(model_name="identity", inputs=[pb_utils.Tensor("INPUT0", np.ones(256, dtype=np.float32))], requested_output_names=["OUTPUT0"])
times = []
for _ in range(20000):
    start = time.perf_counter()
    model.execute([request])
    times.append((time.perf_counter() - start) * 1e6)
times = sorted(times[2000:])
print(json.dumps({"p50": times[len(times) // 2], "p99": times[int(len(times) * 0.99)]}))
`;
  return JSON.parse(execFileSync('python3', ['-c', script], { env: { ...process.env, PYTHONPATH: PYTHON_UTILS } }).toString()) as { p50: number; p99: number };
}
