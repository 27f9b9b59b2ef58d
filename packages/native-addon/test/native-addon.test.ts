import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { BUILD_LOG, BUILD_STATUS, installHint, loadAddon, packageManagerOf, readBuildStatus, rebuildCommand } from '../index.mjs';
import { buildAddon } from '../install.mjs';

const work = mkdtempSync(join(tmpdir(), 'tritium-native-addon-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A package directory as an installer leaves it: under `layout` inside `work`, with the status given (if any). */
function packageAt(layout: string, status?: object): string {
  const root = join(work, layout);
  mkdirSync(join(root, 'build'), { recursive: true });
  if (status) writeFileSync(join(root, BUILD_STATUS), JSON.stringify(status));
  writeFileSync(join(root, BUILD_LOG), 'c++: error: something\n');
  return root;
}

const failed = { ok: false, reason: 'cmake is not on PATH', log: BUILD_LOG, packageManager: 'npm', at: '2026-01-01T00:00:00.000Z' };
const options = (packageRoot: string) => ({
  path: join(packageRoot, 'build', 'Release', 'x.node'),
  packageRoot,
  packageName: '@tritium/x',
  what: 'the x addon',
  needs: 'install cmake and a C++ compiler',
});

describe('the hint names the package manager that installed the package', () => {
  it('a checkout of the workspace: pnpm --filter … build:native', () => {
    const root = packageAt('checkout/packages/x');
    expect(packageManagerOf(root)).toBe('workspace');
    expect(installHint('@tritium/x', root)).toBe('`pnpm --filter @tritium/x build:native`');
  });

  it('npm: npm rebuild, from the status file, the user agent or the layout', () => {
    expect(packageManagerOf(packageAt('npm-app/node_modules/@tritium/x', failed))).toBe('npm');
    vi.stubEnv('npm_config_user_agent', 'npm/10.8.2 node/v20.19.0 linux x64 workspaces/false');
    expect(packageManagerOf(packageAt('npm-agent/node_modules/@tritium/x'))).toBe('npm');
    vi.stubEnv('npm_config_user_agent', '');
    expect(packageManagerOf(packageAt('npm-layout/node_modules/@tritium/x'))).toBe('npm');
    vi.unstubAllEnvs();
    expect(rebuildCommand('@tritium/x', 'npm')).toBe('`npm rebuild @tritium/x`');
  });

  it('pnpm: pnpm rebuild, after pnpm approve-builds when the install script never ran', () => {
    const store = packageAt('pnpm-app/node_modules/.pnpm/@tritium+x@0.1.0/node_modules/@tritium/x');
    mkdirSync(join(work, 'pnpm-app/node_modules/@tritium'), { recursive: true });
    symlinkSync(store, join(work, 'pnpm-app/node_modules/@tritium/x'));
    vi.stubEnv('npm_config_user_agent', '');
    expect(packageManagerOf(join(work, 'pnpm-app/node_modules/@tritium/x'))).toBe('pnpm');
    expect(installHint('@tritium/x', store)).toBe('`pnpm approve-builds` (allowing its install script), then `pnpm rebuild @tritium/x`');
    vi.unstubAllEnvs();
    expect(rebuildCommand('@tritium/x', 'pnpm')).toBe('`pnpm rebuild @tritium/x`');
  });

  it('another package manager: both npm and pnpm', () => {
    const root = packageAt('yarn-app/node_modules/@tritium/x', { ...failed, packageManager: 'yarn' });
    expect(packageManagerOf(root)).toBe('other');
    expect(installHint('@tritium/x', root)).toBe('`npm rebuild @tritium/x` (pnpm: `pnpm rebuild @tritium/x`)');
  });
});

describe('loadAddon', () => {
  it('says what failed at install and where the log is', () => {
    const root = packageAt('failed/node_modules/@tritium/x', failed);
    const { path } = options(root);
    expect(() => loadAddon(options(root))).toThrow(
      `the x addon of @tritium/x is not built (${path} does not exist; the build at install at 2026-01-01T00:00:00.000Z failed: cmake is not on PATH; log: ${join(root, BUILD_LOG)}): install cmake and a C++ compiler, then run \`npm rebuild @tritium/x\``,
    );
  });

  it('says when the install script never ran (npm --ignore-scripts, pnpm without approval)', () => {
    const root = packageAt('ignored/node_modules/.pnpm/@tritium+x@0.1.0/node_modules/@tritium/x');
    vi.stubEnv('npm_config_user_agent', '');
    expect(() => loadAddon(options(root))).toThrow(/does not exist; its install script did not run\): install cmake and a C\+\+ compiler, then run `pnpm approve-builds` \(allowing its install script\), then `pnpm rebuild @tritium\/x`/);
    vi.unstubAllEnvs();
  });

  it('a file that is not an addon says it does not load, and why', () => {
    const root = packageAt('checkout2/packages/x');
    mkdirSync(join(root, 'build', 'Release'));
    writeFileSync(options(root).path, 'not a shared object');
    expect(() => loadAddon(options(root))).toThrow(/is not built \(.*x\.node does not load: .+\): install cmake and a C\+\+ compiler, then run `pnpm --filter @tritium\/x build:native`/);
  });
});

describe('buildAddon', () => {
  it('when it cannot build, still writes the status and the log, and does not throw', () => {
    const root = packageAt('cannot/node_modules/@tritium/x');
    writeFileSync(join(root, 'package.json'), '{"name":"@tritium/x"}');
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    vi.stubEnv('npm_config_user_agent', 'npm/10.8.2 node/v20.19.0 linux x64 workspaces/false');
    try {
      const status = buildAddon({ packageRoot: root, packageName: '@tritium/x', what: 'the x addon', addonFile: 'build/Release/x.node', needs: 'install cmake', unsupported: 'not on this platform' });
      expect(status).toMatchObject({ ok: false, reason: 'not on this platform', log: BUILD_LOG, packageManager: 'npm' });
      expect(readBuildStatus(root)).toEqual(status);
      expect(readFileSync(join(root, BUILD_LOG), 'utf8')).toBe('@tritium/x: the build did not start: not on this platform\n');
      expect(log).toHaveBeenCalledWith(
        `@tritium/x: the x addon was not built (not on this platform; log: ${join(root, BUILD_LOG)}); to build it, install cmake, then run \`npm rebuild @tritium/x\`.`,
      );
      expect(() => loadAddon({ ...options(root), needs: 'install cmake' })).toThrow(/failed: not on this platform; log: .*native-build\.log\): install cmake, then run `npm rebuild @tritium\/x`$/);
    } finally {
      log.mockRestore();
      vi.unstubAllEnvs();
    }
  });
});
