import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const run = (script: string) =>
  promisify(execFile)(process.execPath, ['--import', 'tsx', script], { cwd: root, timeout: 60_000 });

// The examples are what the README's first command runs: they must keep working.
describe('examples', () => {
  it('quickstart serves ONNX models from a repository it creates, loading the ONNX backend by name', async () => {
    const { stdout } = await run('examples/quickstart/main.ts');
    expect(stdout).toMatch(/add_sub v1: READY \(onnxruntime-node/);
    expect(stdout).toMatch(/echo_text v1: READY/);
    expect(stdout).toContain('INPUT0 + INPUT1 = 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16');
    expect(stdout).toContain('INPUT0 - INPUT1 = -1 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14');
    expect(stdout).toContain('["hello","tritium"]');
    expect(stdout).toMatch(/INVALID_ARG: model 'add_sub': input 'INPUT0' has shape \[1,4\]/);
    expect(stdout).toMatch(/'mlp v1'\s*│\s*1280\s*│\s*20\s*│/);
  });

  it('custom-backend serves a model with a backend written in TypeScript', async () => {
    const { stdout } = await run('examples/custom-backend/main.ts');
    expect(stdout).toContain('softmax v1 -> shape [2,4]: 0.002 0.016 0.117 0.865 0.000 0.000 0.000 1.000');
    expect(stdout).toMatch(/a wrong shape is refused: INVALID_ARG/);
    expect(stdout).toContain('statistics: 2 inferences in 1 executions, success 1');
  });
});
