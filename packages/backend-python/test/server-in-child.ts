/**
 * Run as a child process by a test that kills it: serves add_sub, answers one request,
 * prints "serving <stub pids>", and waits to be killed.
 */
import { readdir, readFile } from 'node:fs/promises';
import { InferenceServer } from '@tritium/core';
import { pythonBackend } from '@tritium/backend-python';

const server = await InferenceServer.start({ modelRepository: process.argv[2]!, backends: [pythonBackend()] });
const four = { datatype: 'FP32' as const, shape: [4], data: new Float32Array(4) };
await server.infer('add_sub', { inputs: { INPUT0: four, INPUT1: four } });
const stubs: number[] = [];
for (const entry of await readdir('/proc')) {
  const status = await readFile(`/proc/${entry}/status`, 'utf8').catch(() => '');
  if (new RegExp(`^PPid:\\s+${process.pid}$`, 'm').test(status)) stubs.push(Number(entry));
}
console.log(`serving ${stubs.join(' ')}`);
setInterval(() => {}, 1000);
