/**
 * The PyTorch backend, measured (issue 11): server.infer() on a TorchScript MLP
 * (256 → 512 → 256, FP32) against calling the same module from Python with torch
 * (torch.jit.load, inference mode, the same libtorch thread count), batch 1 and 64, one
 * caller; the model runs on its instance's thread (the default) and, as a second model of
 * the same file, inline (`execution_thread: inline`, on the event loop's thread). Rounds
 * alternate Python and the two models so machine load hits all alike; figures are
 * medians over rounds (ROUNDS, default 5). Targets: at most 20 µs added at batch 1,
 * within 10% at batch 64.
 * Run: npx -y pnpm@10.34.9 bench:pytorch
 */
import { execFileSync } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InferenceServer } from '@tritium/core';
import { pytorchBackend } from '../packages/backend-pytorch/src/index.js';
import { measureRate, median, table } from './measure.js';

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const BATCHES = [1, 64];
const CALLS = 2000;
/** The two models of the one file: where their runs happen, and the config lines that say so. */
const PLACEMENTS = [
  { model: 'mlp', where: "instance's thread", parameters: '' },
  { model: 'mlp_inline', where: 'inline', parameters: 'parameters { key: "execution_thread" value: { string_value: "inline" } }\n' },
];

const PYTHON = `import sys, time, torch
path, batch, calls = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if len(sys.argv) > 4:
    mlp = torch.jit.script(torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256)))
    mlp.save(path)
    sys.exit(0)
module = torch.jit.load(path).eval()
x = torch.randn(batch, 256)
with torch.inference_mode():
    for _ in range(200):
        module(x)
    start = time.perf_counter()
    for _ in range(calls):
        module(x)
    print((time.perf_counter() - start) / calls * 1e6)
`;

const python = (...args: string[]) => execFileSync('python3', ['-c', PYTHON, ...args], { encoding: 'utf8' }).trim();

const repository = await mkdtemp(join(tmpdir(), 'tritium-bench-pytorch-'));
try {
  const modelPath = join(repository, 'model.pt');
  python(modelPath, '1', '0', 'write');
  for (const { model, parameters } of PLACEMENTS) {
    await mkdir(join(repository, model, '1'), { recursive: true });
    await copyFile(modelPath, join(repository, model, '1', 'model.pt'));
    await writeFile(
      join(repository, model, 'config.pbtxt'),
      `backend: "pytorch"
max_batch_size: 64
input [ { name: "INPUT__0" data_type: TYPE_FP32 dims: [ 256 ] } ]
output [ { name: "OUTPUT__0" data_type: TYPE_FP32 dims: [ 256 ] } ]
${parameters}`,
    );
  }
  const server = await InferenceServer.start({ modelRepository: repository, backends: [pytorchBackend()] });
  try {
    const rows = [];
    for (const batch of BATCHES) {
      const data = Float32Array.from({ length: batch * 256 }, () => Math.random() - 0.5);
      const onces = PLACEMENTS.map(({ model }) => () => server.infer(model, { inputs: { INPUT__0: { datatype: 'FP32', shape: [batch, 256], data } } }));
      for (const once of onces) await measureRate(once, 200);
      const calls = batch === 1 ? CALLS : CALLS / 4;
      const torchUs: number[] = [];
      const serverUs: number[][] = PLACEMENTS.map(() => []);
      for (let round = 0; round < ROUNDS; round++) {
        torchUs.push(Number(python(modelPath, String(batch), String(calls))));
        for (const [k, once] of onces.entries()) serverUs[k]!.push((await measureRate(once, calls)).usPerRequest);
      }
      for (const [k, { where }] of PLACEMENTS.entries()) {
        const us = serverUs[k]!;
        rows.push({
          batch: String(batch),
          runs: where,
          'torch in Python µs': median(torchUs).toFixed(1),
          'server.infer() µs': median(us).toFixed(1),
          'added µs': median(us.map((u, i) => u - torchUs[i]!)).toFixed(1),
          'server / torch': median(us.map((u, i) => u / torchUs[i]!)).toFixed(3),
        });
      }
    }
    table(rows);
  } finally {
    await server.stop();
  }
} finally {
  await rm(repository, { recursive: true, force: true });
}
