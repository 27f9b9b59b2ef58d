// A backend's install script: builds its addon with cmake-js when it can, and never fails
// the install when it cannot (no cmake, no compiler, no cmake-js, a platform it does not
// support). Either way it leaves build/native-build.log (cmake-js's output, or why it did not
// run) and build/native-build.json ({ ok, reason, log, packageManager, at }), because npm
// hides an install script's output: the loader (index.mjs) reads them and says what failed.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';
import { BUILD_LOG, BUILD_STATUS, installHint, packageManagerFromAgent } from './index.mjs';

function runs(command, args = ['--version']) {
  return !spawnSync(command, args, { stdio: 'ignore' }).error;
}

/** Whether `command` runs, by path or found on PATH. */
export function onPath(command) {
  if (command.includes('/')) return runs(command);
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir && runs(join(dir, command)));
}

/** Why cmake-js cannot build in `packageRoot`, or null when cmake-js, cmake and a C++ compiler are all there. */
export function missingBuildTool(packageRoot) {
  try {
    createRequire(join(packageRoot, 'package.json')).resolve('cmake-js/package.json');
  } catch {
    return 'cmake-js is not installed (a dependency of the package)';
  }
  if (!onPath('cmake')) return 'cmake is not on PATH';
  const compilers = process.env.CXX ? [process.env.CXX] : ['c++', 'g++', 'clang++'];
  if (!compilers.some(onPath)) return `no C++ compiler on PATH (looked for ${compilers.join(', ')})`;
  return null;
}

/** The first line of a failed build's output that says most: a compiler's "error:", then cmake's. */
function firstError(output) {
  const lines = output.split('\n').map((line) => line.trim()).filter(Boolean);
  return [/\berror:/i, /^CMake Error/, /error/i].map((p) => lines.find((line) => p.test(line))).find(Boolean) ?? lines.at(-1) ?? 'no output';
}

/** Runs `cmake-js compile` in `packageRoot`; returns its output and why it failed (null when it built). */
function compile(packageRoot) {
  const cmakeJs = createRequire(join(packageRoot, 'package.json')).resolve('cmake-js/bin/cmake-js');
  const result = spawnSync(process.execPath, [cmakeJs, 'compile'], { cwd: packageRoot, encoding: 'utf8', maxBuffer: 64 << 20 });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (result.error) return { output, reason: `cmake-js could not run: ${result.error.message}` };
  if (result.status !== 0) return { output, reason: `cmake-js exited with ${result.status ?? result.signal}: ${firstError(output)}` };
  return { output, reason: null };
}

/**
 * Builds a backend's addon at install time and records the result.
 * - packageRoot: the backend's package directory (where CMakeLists.txt and package.json are)
 * - packageName, what ("the shared-memory addon"), addonFile ("build/Release/shared_memory.node")
 * - needs: what the user must install before rebuilding ("install cmake and a C++ compiler")
 * - unsupported: why this platform cannot have the addon, or null
 * - missing: a check after the common tools, returning why the build cannot run, or null
 * - strict: exit 1 and print the whole log when the build fails (for `build:native`)
 * Returns the status written to build/native-build.json.
 */
export function buildAddon({ packageRoot, packageName, what, addonFile, needs, unsupported = null, missing = () => null, strict = false }) {
  const buildDir = join(packageRoot, 'build');
  mkdirSync(buildDir, { recursive: true });
  rmSync(join(packageRoot, BUILD_STATUS), { force: true });
  let output = '';
  let reason;
  try {
    reason = unsupported ?? missingBuildTool(packageRoot) ?? missing();
    if (reason) output = `${packageName}: the build did not start: ${reason}\n`;
    else ({ output, reason } = compile(packageRoot));
    if (!reason && !existsSync(join(packageRoot, addonFile))) reason = `cmake-js finished but ${addonFile} is not there`;
  } catch (error) {
    reason = error instanceof Error ? error.message : String(error);
    output += `${packageName}: the build failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`;
  }
  const status = {
    ok: !reason,
    ...(reason && { reason }),
    log: BUILD_LOG,
    packageManager: packageManagerFromAgent() ?? null,
    at: new Date().toISOString(),
  };
  writeFileSync(join(packageRoot, BUILD_LOG), output);
  writeFileSync(join(packageRoot, BUILD_STATUS), `${JSON.stringify(status, null, 2)}\n`);
  if (status.ok) {
    console.log(`${packageName}: built ${what} (${addonFile}).`);
  } else {
    const log = join(packageRoot, BUILD_LOG);
    console.log(`${packageName}: ${what} was not built (${reason}; log: ${log}); to build it, ${needs}, then run ${installHint(packageName, packageRoot)}.`);
    if (strict) {
      process.stderr.write(output);
      process.exitCode = 1;
    }
  }
  return status;
}
