import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import type { Backend, Logger } from '@tritium/core';
import { modelTable } from '../src/cli/model-table.js';
import { installedBackends, isPackageMissing, OPTIONAL_BACKENDS } from '../src/cli/optional-backends.js';

/** The error Node itself throws when importing a package that is not installed (taken from a child, outside vitest's resolver). */
function missingPackageError(specifier: string): { code: string; message: string } {
  const script = `try { await import(${JSON.stringify(specifier)}) } catch (e) { console.log(JSON.stringify({ code: e.code, message: e.message })) }`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: tmpdir(), encoding: 'utf8' }));
}

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  return { lines, error: (m) => lines.push(`E ${m}`), warn: (m) => lines.push(`W ${m}`), info: (m) => lines.push(`I ${m}`), verbose: (m) => lines.push(`V ${m}`) };
}

const NO_SETTINGS = { python: { executionEnvironmentRoots: [] }, onnxruntime: {} };

describe('installedBackends', () => {
  it('creates the official backends that are installed (both are, in this workspace)', async () => {
    const backends = await installedBackends(recordingLogger(), NO_SETTINGS);
    expect(backends.map((backend) => backend.name)).toEqual(['onnxruntime', 'python']);
    await Promise.all(backends.map((backend) => backend.finalize?.()));
    expect(OPTIONAL_BACKENDS.map((backend) => backend.specifier)).toEqual(['@tritium/backend-onnx', '@tritium/backend-python']);
  });

  it("hands --backend-config's settings to the backend it creates", async () => {
    const seen: unknown[] = [];
    const settings = { python: { interpreter: '/opt/python/bin/python3', executionEnvironmentRoots: ['/opt/envs'], startTimeoutMs: 120_000 }, onnxruntime: { defaultMaxBatchSize: 8 } };
    await installedBackends(recordingLogger(), settings, [{ specifier: '@tritium/backend-present', load: async (given) => (seen.push(given), { name: 'present' } as Backend) }]);
    expect(seen).toEqual([settings]);
  });

  it('leaves out a backend whose package is missing, with a warning', async () => {
    const error = missingPackageError('@tritium/backend-absent');
    const logger = recordingLogger();
    const present = { name: 'present' } as Backend;
    const backends = await installedBackends(logger, NO_SETTINGS, [
      { specifier: '@tritium/backend-absent', load: () => Promise.reject(Object.assign(new Error(error.message), { code: error.code })) },
      { specifier: '@tritium/backend-present', load: async () => present },
    ]);
    expect(backends).toEqual([present]);
    expect(logger.lines).toEqual(['W @tritium/backend-absent is not installed: models that need it will be UNAVAILABLE']);
  });

  it('fails when an installed backend cannot be imported, or misses a package of its own', async () => {
    const broken = () => Promise.reject(new Error('addon ABI mismatch'));
    await expect(installedBackends(recordingLogger(), NO_SETTINGS, [{ specifier: '@tritium/backend-onnx', load: broken }])).rejects.toThrow('addon ABI mismatch');
    const inner = missingPackageError('onnxruntime-absent');
    expect(isPackageMissing(inner, '@tritium/backend-onnx')).toBe(false);
    expect(isPackageMissing(inner, 'onnxruntime-absent')).toBe(true);
    expect(isPackageMissing(undefined, '@tritium/backend-onnx')).toBe(false);
  });
});

describe('modelTable', () => {
  it("draws Triton's model table, with the reason of a version that is not ready", () => {
    expect(
      modelTable([
        { name: 'add_sub', version: 1, state: 'READY', reason: '' },
        { name: 'broken', version: undefined, state: 'UNAVAILABLE', reason: 'no config' },
      ]),
    ).toBe(
      [
        '+---------+---------+------------------------+',
        '| Model   | Version | Status                 |',
        '+---------+---------+------------------------+',
        '| add_sub | 1       | READY                  |',
        '| broken  | -       | UNAVAILABLE: no config |',
        '+---------+---------+------------------------+',
      ].join('\n'),
    );
  });
});
