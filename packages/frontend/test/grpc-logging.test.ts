import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { format } from 'node:util';
import { setLogger } from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import { InferenceServer, type Logger } from '@tritium/core';
import { startGrpcFrontend, type RunningFrontend } from '@tritium/frontend';

// grpc-js's logger is process-wide: the one this file found is put back at the end.
const grpcLogging = createRequire(import.meta.url)('@grpc/grpc-js/build/src/logging.js') as { getLogger(): Partial<Console> };
const original = grpcLogging.getLogger();

let repository: string;
let server: InferenceServer;
const running: RunningFrontend[] = [];

beforeAll(async () => {
  repository = mkdtempSync(join(tmpdir(), 'tritium-grpc-logging-'));
  server = await InferenceServer.start({ modelRepository: repository });
});

afterEach(async () => {
  await Promise.all(running.splice(0).map((frontend) => frontend.close()));
  vi.restoreAllMocks();
});

afterAll(async () => {
  setLogger(original);
  await server?.stop();
  rmSync(repository, { recursive: true, force: true });
});

/** A logger that keeps its lines by level. */
function recordingLogger(): Logger & { lines: Record<'error' | 'warn' | 'info' | 'verbose', string[]> } {
  const lines = { error: [] as string[], warn: [] as string[], info: [] as string[], verbose: [] as string[] };
  return {
    lines,
    error: (message) => lines.error.push(message),
    warn: (message) => lines.warn.push(message),
    info: (message) => lines.info.push(message),
    verbose: (message) => lines.verbose.push(message),
  };
}

/** Everything written to stderr (directly or through console.error) from now on. */
function captureStderr(): string[] {
  const written: string[] = [];
  const write = process.stderr.write.bind(process.stderr);
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array, ...rest: unknown[]) => {
    written.push(String(chunk));
    return (write as (...args: unknown[]) => boolean)(chunk, ...rest);
  });
  const consoleError = console.error.bind(console);
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
    written.push(format(...args));
    consoleError(...args);
  });
  return written;
}

async function start(options: Parameters<typeof startGrpcFrontend>[1]): Promise<RunningFrontend> {
  const frontend = await startGrpcFrontend(server, { host: '127.0.0.1', ...options });
  running.push(frontend);
  return frontend;
}

const NO_ADDRESS = '@grpc/grpc-js: No address added out of total 1 resolved';

it("sends grpc-js's line about a port it cannot bind to the frontend's logger, not to stderr", async () => {
  const first = recordingLogger();
  const second = recordingLogger();
  const { port } = await start({ port: 0, logger: first });
  const stderr = captureStderr();

  await expect(start({ port, logger: second })).rejects.toMatchObject({
    code: 'UNAVAILABLE',
    message: expect.stringMatching(`the gRPC frontend cannot listen on 127.0.0.1:${port}: No address added`),
  });

  expect(second.lines.error).toEqual([NO_ADDRESS]);
  expect(first.lines.error).toEqual([]);
  expect(stderr.filter((text) => text.includes('No address added'))).toEqual([]);
});

it('routes to the most recently started frontend still running, and gives grpc-js its previous logger back after the last closes', async () => {
  const application = recordingLogger();
  setLogger({ error: application.error, info: application.info, debug: application.verbose });
  const first = recordingLogger();
  const { port } = await start({ port: 0, logger: first });

  // A frontend without a logger leaves grpc-js's logger as it is: the running one's gets the line.
  await expect(start({ port })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  expect(first.lines.error).toEqual([NO_ADDRESS]);
  expect(application.lines.error).toEqual([]);

  await Promise.all(running.splice(0).map((frontend) => frontend.close()));
  const taken = await start({ port: 0 });
  await expect(start({ port: taken.port })).rejects.toMatchObject({ code: 'UNAVAILABLE' });
  expect(application.lines.error).toEqual(['No address added out of total 1 resolved']);
  expect(first.lines.error).toEqual([NO_ADDRESS]);
});

it('refuses a logger without the methods grpc-js lines go to', async () => {
  await expect(start({ port: 0, logger: console as unknown as Logger })).rejects.toMatchObject({
    code: 'INVALID_ARG',
    message: 'gRPC frontend option `logger` must have the methods error, info and verbose; it lacks verbose',
  });
});
