import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeRepository, torchMissing } from './helpers.js';
import type { Repository } from './helpers.js';

const ADDON = fileURLToPath(new URL('../build/Release/torchscript.node', import.meta.url));

/** Runs a CommonJS script in its own Node process (the cases end or crash a process), with `addon` and `slow` (a model path) defined. */
function run(script: string, slowModel: string) {
  const prelude = `const addon = require(${JSON.stringify(ADDON)}); const slow = ${JSON.stringify(slowModel)};\n`;
  return spawnSync(process.execPath, ['-e', prelude + script], { encoding: 'utf8', timeout: 60_000 });
}

// The addon's lifecycle at the edges of a process, each in a child so a hang or a crash is seen as such.
describe.skipIf(torchMissing)("the addon's instance threads and environments", () => {
  let repository: Repository;
  let slow: string;

  beforeAll(async () => {
    repository = await makeRepository();
    slow = join(repository.path, 'slow', '1', 'model.pt');
  });

  afterAll(async () => {
    await repository?.remove();
  });

  it('lets the process exit when an instance thread was never closed', () => {
    const result = run(`addon.load(slow, 'cpu').then((module) => { globalThis.thread = new addon.InstanceThread(module, { inferenceMode: true, optimizedExecution: true, cacheCleaning: false }); });`, slow);
    expect(result.error).toBeUndefined();
    expect(result.status).toBe(0);
  });

  it('settles close() after a run under way, and the run itself, even when nothing else holds the process', () => {
    const result = run(
      `(async () => {
        const module = await addon.load(slow, 'cpu');
        const options = { inferenceMode: true, optimizedExecution: true, cacheCleaning: false };
        for (let i = 0; i < 200; i++) {
          const thread = new addon.InstanceThread(module, options);
          const running = thread.forward([{ name: 'ROUNDS__0', datatype: 'INT64', shape: [1], data: new BigInt64Array([1n]) }]);
          const closing = thread.close();
          await running;
          await closing;
        }
        console.log('all closed');
      })();`,
      slow,
    );
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('all closed');
  });

  it('loads models on the main thread after a worker thread has loaded the addon too', () => {
    const result = run(
      `const { Worker } = require('node:worker_threads');
      const worker = new Worker('require(' + JSON.stringify(${JSON.stringify(ADDON)}) + ')', { eval: true });
      worker.on('exit', async () => {
        const module = await addon.load(slow, 'cpu');
        console.log(JSON.stringify(module.arguments()));
      });`,
      slow,
    );
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('"name":"ROUNDS__0"');
  });
});
