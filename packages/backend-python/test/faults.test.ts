import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { InferenceServer, Tensor } from '@tritium/core';
import { pythonMissing, stubProcesses, usePythonServer } from './helpers.js';

const SERVER_IN_CHILD = fileURLToPath(new URL('./server-in-child.ts', import.meta.url));

const fp32 = (...values: number[]): Tensor => ({ datatype: 'FP32', shape: [values.length], data: new Float32Array(values) });
const int32 = (...values: number[]): Tensor => ({ datatype: 'INT32', shape: [values.length], data: new Int32Array(values) });

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error, 'expected a rejection').toBeDefined();
  return error as { code: string; message: string };
}

async function until(condition: () => Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error('the condition did not come true in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function stateOf(server: InferenceServer, name: string) {
  return (await server.repositoryIndex()).find((entry) => entry.name === name)!;
}

describe.skipIf(pythonMissing)('Python model faults', () => {
  const python = usePythonServer();

  it('an exception in execute() fails that request with the message and traceback; the model keeps serving', async () => {
    const server = await python.start(['execute_raises', 'add_sub']);
    const error = await failure(server.infer('execute_raises', { inputs: { INPUT0: fp32(1) } }));
    expect(error.code).toBe('INTERNAL');
    expect(error.message).toMatch(/boom/);
    expect(error.message).toMatch(/Traceback/);
    expect(await server.isModelReady('execute_raises')).toBe(true);
    await expect(server.infer('add_sub', { inputs: { INPUT0: fp32(1, 1, 1, 1), INPUT1: fp32(1, 1, 1, 1) } })).resolves.toBeDefined();
  });

  it('initialize() raising leaves the model UNAVAILABLE with the traceback as its reason', async () => {
    const server = await python.start(['init_raises', 'add_sub']);
    const entry = await stateOf(server, 'init_raises');
    expect(entry.state).toBe('UNAVAILABLE');
    expect(entry.reason).toMatch(/Traceback[\s\S]*initialize/);
    expect(await server.isModelReady('add_sub')).toBe(true);
  });

  it("a stub that exits mid-request fails that request at once (its output not in the error), restarts, and serves the next one", async () => {
    const server = await python.start(['exits_midrequest']);
    const started = Date.now();
    const error = await failure(server.infer('exits_midrequest', { inputs: { INPUT0: int32(1) } }));
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toMatch(/exited with code 1 \(its output is in the server's log\)/);
    expect(error.message).not.toMatch(/private output/);
    expect(Date.now() - started).toBeLessThan(5_000);
    const response = await server.infer('exits_midrequest', { inputs: { INPUT0: int32(2) } });
    expect(Array.from(response.outputs.OUTPUT0!.data as Int32Array)).toEqual([2]);
  });

  it('a stub killed with SIGKILL fails its in-flight request at once; the next request succeeds on a new stub', async () => {
    const server = await python.start(['hangs', 'add_sub']);
    const [pid, ...others] = await stubProcesses();
    const pending = failure(server.infer('hangs', { inputs: { INPUT0: fp32(1) } }));
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Which stub is which: kill them all; both models must recover.
    for (const p of [pid!, ...others]) process.kill(p, 'SIGKILL');
    const error = await pending;
    expect(error.code).toBe('UNAVAILABLE');
    expect(error.message).toMatch(/SIGKILL/);
    // A request sent in the moment between a stub's death and Node seeing it fails too; once restarted, it serves.
    await until(() => server.isModelReady('add_sub'));
    await expect(server.infer('add_sub', { inputs: { INPUT0: fp32(1, 1, 1, 1), INPUT1: fp32(1, 1, 1, 1) } })).resolves.toBeDefined();
  });

  it('a hanging execute() is ended by the caller’s deadline, readiness still answers, and unload and stop still finish', async () => {
    const server = await python.start(['hangs'], { modelControlMode: 'explicit', startupModels: ['hangs'], exitTimeoutMs: 500 });
    const error = await failure(server.infer('hangs', { inputs: { INPUT0: fp32(1) }, signal: AbortSignal.timeout(300) }));
    expect(error.code).toBe('DEADLINE_EXCEEDED');
    const asked = Date.now();
    expect(await server.isModelReady('hangs')).toBe(true);
    expect(Date.now() - asked).toBeLessThan(1_000);
    const started = Date.now();
    await server.unloadModel('hangs');
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(await stubProcesses()).toEqual([]);
  });

  it('a stub that exits in initialize() leaves the model UNAVAILABLE and is not restarted', async () => {
    const server = await python.start(['init_exits']);
    const entry = await stateOf(server, 'init_exits');
    expect(entry.state).toBe('UNAVAILABLE');
    expect(entry.reason).toMatch(/exited during initialize/);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await stubProcesses()).toEqual([]);
  });

  it('a decoupled execute() that raises fails its open streams; the model serves the next request', async () => {
    const server = await python.start(['decoupled_raises']);
    for (let i = 0; i < 2; i++) {
      const error = await failure(drain(server, 'decoupled_raises', { inputs: { IN: int32(1) } }));
      expect(error.message).toMatch(/decoupled boom/);
    }
  });

  it("an error a model puts in a response reaches the client in the model's words, as in Triton", async () => {
    const server = await python.start(['repeat']);
    const uint32 = (...values: number[]): Tensor => ({ datatype: 'UINT32', shape: [values.length], data: new Uint32Array(values) });
    const error = await failure(drain(server, 'repeat', { inputs: { IN: int32(1, 2, 3), DELAY: uint32(0, 0), WAIT: uint32(0) } }));
    expect(error).toMatchObject({ code: 'INVALID_ARG', message: 'DELAY has shape [2] but IN has shape [3]' });
  });

  for (const [model, fault] of [
    ['not_a_list', /Expected a list in the execute return/],
    ['not_a_response', /InferenceResponse/],
    ['wrong_count', /InferenceRequest\(s\) size is:1, and InferenceResponse\(s\) size is:0/],
    ['decoupled_returns', /None/],
  ] as const) {
    it(`${model}: a wrong execute() result fails the request, naming the fault`, async () => {
      const server = await python.start([model]);
      const request = { inputs: { INPUT0: model === 'wrong_count' ? { ...fp32(1), shape: [1, 1] } : fp32(1) } };
      const run = model === 'decoupled_returns' ? drain(server, model, request) : server.infer(model, request);
      const error = await failure(run);
      expect(error.message).toMatch(fault);
      expect(await server.isModelReady(model)).toBe(true);
    });
  }
});

async function drain(server: InferenceServer, model: string, request: Parameters<InferenceServer['inferStream']>[1]): Promise<void> {
  for await (const _ of server.inferStream(model, request)) {
    // responses are not the point: the error is
  }
}

describe.skipIf(pythonMissing)('when Node itself dies', () => {
  const python = usePythonServer();

  it('its stubs exit and remove their shared memory', async () => {
    const repo = await python.repository(['add_sub']);
    const child = spawn(process.execPath, ['--import', 'tsx', SERVER_IN_CHILD, repo], { stdio: ['ignore', 'pipe', 'inherit'] });
    const stubs = await new Promise<number[]>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        const match = /serving ([\d ]+)/.exec(chunk.toString());
        if (match) resolve(match[1]!.trim().split(' ').map(Number));
      });
      child.once('exit', (code) => reject(new Error(`the server exited early (${code})`)));
    });
    expect(stubs.length).toBeGreaterThan(0);
    child.kill('SIGKILL');
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return readFileSync(`/proc/${pid}/status`, 'utf8').match(/^State:\s+Z/m) === null;
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 10_000;
    while (stubs.some(alive) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stubs.filter(alive)).toEqual([]);
    expect(readdirSync('/dev/shm').filter((name) => name.startsWith(`tritium-${child.pid}-`))).toEqual([]);
  });
});
