// The package's install script: builds the shared-memory addon with cmake-js when it can,
// and never fails the install when it cannot (no cmake, no compiler, no cmake-js): it
// prints one line saying the addon was not built and why. The backend then says the same
// thing when a model needs the addon (src/native.ts).
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const LOG = join('build', 'native-build.log');
const FIX = 'install cmake and a C++ compiler, then run `pnpm --filter @tritium/backend-python build:native`';

function onPath(command) {
  if (command.includes('/')) return !spawnSync(command, ['--version'], { stdio: 'ignore' }).error;
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const result = spawnSync(join(dir, command), ['--version'], { stdio: 'ignore' });
    if (!result.error) return true;
  }
  return false;
}

/** Why the addon cannot be built here, or null when the tools are all present. */
function missingTool() {
  if (process.platform === 'win32') return 'shared memory uses POSIX mmap, which Windows lacks';
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

function build() {
  const cmakeJs = createRequire(join(packageRoot, 'package.json')).resolve('cmake-js/bin/cmake-js');
  const result = spawnSync(process.execPath, [cmakeJs, 'compile'], { cwd: packageRoot, encoding: 'utf8', maxBuffer: 64 << 20 });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  mkdirSync(join(packageRoot, 'build'), { recursive: true });
  writeFileSync(join(packageRoot, LOG), output);
  if (result.error) return `cmake-js could not run: ${result.error.message}`;
  if (result.status !== 0) {
    const lines = output.split('\n').map((line) => line.trim()).filter(Boolean);
    // A compiler's own "error:" line says most; cmake's summary lines say least.
    const firstError = [/\berror:/i, /^CMake Error/, /error/i].map((p) => lines.find((line) => p.test(line))).find(Boolean) ?? lines.at(-1) ?? 'no output';
    return `cmake-js exited with ${result.status ?? result.signal}: ${firstError} (full log: ${LOG})`;
  }
  return null;
}

try {
  const reason = missingTool() ?? build();
  if (reason) console.log(`@tritium/backend-python: the shared-memory addon was not built (${reason}); to build it, ${FIX}.`);
  else console.log('@tritium/backend-python: built the shared-memory addon (build/Release/shared_memory.node).');
} catch (error) {
  console.log(`@tritium/backend-python: the shared-memory addon was not built (${error instanceof Error ? error.message : String(error)}); to build it, ${FIX}.`);
}
