import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, test, vi } from 'vitest';
import { InferenceError } from '@tritium/core';
import { onnxBackend } from '../src/index.js';
import { ExecutionPool } from '../src/execution-pool.js';
import type { OnnxInstance } from '../src/onnx-instance.js';
import { EXECUTION_THREAD_PARAMETER } from '../src/thread-choice.js';
import { fp32, HealthLog, loadDirect, outputsOf, request, TempRepository } from './helpers.js';

// Its own file: the first test needs a process (vitest worker) where no pooled session opened yet.

const worker = { parameters: { [EXECUTION_THREAD_PARAMETER]: { string_value: 'worker' } } };
const tinyInput = (x: number) => ({ INPUT0: fp32([x], [1, 1]) });

afterEach(() => vi.restoreAllMocks());

describe('the execution pool, at its edges', () => {
  test('a thread that cannot be started fails that open UNAVAILABLE, and later opens do not wait forever', async () => {
    const repo = await TempRepository.create();
    try {
      const place = vi.spyOn(ExecutionPool.prototype as unknown as { place(group: string): unknown }, 'place').mockImplementationOnce(() => {
        throw new Error('ERR_WORKER_INIT_FAILED: EAGAIN');
      });
      const backend = onnxBackend();
      const error = await loadDirect(backend, repo, 'first', 'tiny', worker).then(
        () => undefined,
        (e: unknown) => e as InferenceError,
      );
      expect(error).toBeInstanceOf(InferenceError);
      expect(error?.code).toBe('UNAVAILABLE');
      expect(error?.message).toMatch(/no execution pool thread could be started: ERR_WORKER_INIT_FAILED/);
      place.mockRestore();
      const loaded = await Promise.race([
        loadDirect(backend, repo, 'second', 'tiny', worker),
        new Promise<never>((_, reject) => setTimeout(() => reject(new Error('the next open waited for a start-up that never settled')), 10_000)),
      ]);
      expect(outputsOf(await loaded.instances[0]!.execute([request(tinyInput(1), [])]))[0]!.OUTPUT0!.data).toEqual(new Float32Array([2]));
      await loaded.instances[0]!.finalize?.();
      await loaded.model.finalize?.();
    } finally {
      await repo.cleanup();
    }
  });

  test("a model's first session whose thread died before an instance took it is replaced, not kept dead", async () => {
    const repo = await TempRepository.create();
    try {
      const loaded = await loadDirect(onnxBackend(), repo, 'spare', 'tiny', worker, 0);
      const spare = (loaded.model as unknown as { spare: { session: { host: { worker: { terminate(): Promise<number> } } } } }).spare.session;
      await spare.host.worker.terminate();
      // Let the 'exit' event reach the pool thread's owner.
      await new Promise((resolve) => setTimeout(resolve, 20));
      const health = new HealthLog();
      const instance = (await loaded.model.createInstance({ name: 'spare_0_0', kind: 'KIND_CPU', health })) as OnnxInstance;
      for (let i = 0; i < 200 && health.reports.length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      expect(health.reports).toEqual([expect.stringMatching(/^recovering: its worker thread exited with code 1/), 'restored']);
      expect(outputsOf(await instance.execute([request(tinyInput(4), [])]))[0]!.OUTPUT0!.data).toEqual(new Float32Array([5]));
      await instance.finalize?.();
      await loaded.model.finalize?.();
    } finally {
      await repo.cleanup();
    }
  });

  test('a model freed while its pool thread is inside a run fails the runs UNAVAILABLE, and the process ends normally', async () => {
    const root = fileURLToPath(new URL('../../../', import.meta.url));
    const child = fileURLToPath(new URL('./stop-mid-run-in-child.ts', import.meta.url));
    // Terminating the thread mid-run would abort the process (status 134): execFile would reject.
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['--import', 'tsx', child], { cwd: root });
    expect(stderr).not.toMatch(/terminate called/);
    expect(JSON.parse(stdout)).toEqual(Array(3).fill("model 'mlp': the session was released"));
  });

  if (process.platform !== 'linux') console.log(`skipping the execution threads' priority test: a thread's own nice value is Linux's (this is ${process.platform})`);
  test.skipIf(process.platform !== 'linux')('the execution threads, and the intra-op threads their sessions start, run at executionThreadPriority; the event loop keeps its own', async () => {
    const niceOf = (tid: string) => Number(readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]);
    const before = new Set(readdirSync('/proc/self/task'));
    const own = niceOf(String(process.pid));
    const repo = await TempRepository.create();
    try {
      const wide = { parameters: { ...worker.parameters, intra_op_thread_count: { string_value: '2' } } };
      const loaded = await loadDirect(onnxBackend({ executionThreadPriority: 19 }), repo, 'niced', 'tiny', wide);
      expect(outputsOf(await loaded.instances[0]!.execute([request(tinyInput(1), [])]))[0]!.OUTPUT0!.data).toEqual(new Float32Array([2]));
      const started = readdirSync('/proc/self/task').filter((tid) => !before.has(tid));
      // The pool thread and its session's intra-op thread at least (19, the lowest, which any process may take).
      expect(started.filter((tid) => niceOf(tid) === 19).length).toBeGreaterThanOrEqual(2);
      expect(niceOf(String(process.pid))).toBe(own);
      await loaded.instances[0]!.finalize?.();
      await loaded.model.finalize?.();
    } finally {
      await repo.cleanup();
    }
    expect(() => onnxBackend({ executionThreadPriority: 20 })).toThrow(/executionThreadPriority must be a whole number from -20 to 19, not 20/);
  });
});
