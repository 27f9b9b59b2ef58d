import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** Why no redis-server can be started here, or undefined when one can. */
export const redisMissing: string | undefined = (() => {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return undefined;
  } catch {
    return 'redis-server is not installed';
  }
})();

/** A loopback port nothing listens on now. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

/** A redis-server of its own on a free loopback port, without persistence, ready to take connections; kill it when done. */
export async function startRedis(): Promise<{ port: number; process: ChildProcess }> {
  const port = await freePort();
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    redis.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('Ready to accept connections') && resolve());
    redis.once('exit', (code) => reject(new Error(`redis-server exited (${code})`)));
  });
  return { port, process: redis };
}
