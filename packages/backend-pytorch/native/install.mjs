// The package's install script: builds the TorchScript addon with cmake-js against the
// libtorch of the `torch` Python package (or TRITIUM_LIBTORCH_DIR) when it can, and never
// fails the install when it cannot (no torch, no cmake, no compiler): it prints one line
// saying the addon was not built and why. A PyTorch model then says the same thing when
// it loads (src/native.ts).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageRoot = fileURLToPath(new URL('..', import.meta.url));
const LOG = join('build', 'native-build.log');
const FIX = 'install the torch Python package (`pip install torch`, the CPU wheel will do), cmake and a C++ compiler, then run `pnpm --filter @tritium/backend-pytorch build:native`';

function runs(command, args = ['--version']) {
  return !spawnSync(command, args, { stdio: 'ignore' }).error;
}

function onPath(command) {
  if (command.includes('/')) return runs(command);
  return (process.env.PATH ?? '').split(delimiter).some((dir) => dir && runs(join(dir, command)));
}

/** Why the addon cannot be built here, or null when everything is present. */
function missingPiece() {
  if (process.platform !== 'linux') return 'the addon is built for Linux only';
  try {
    createRequire(join(packageRoot, 'package.json')).resolve('cmake-js/package.json');
  } catch {
    return 'cmake-js is not installed (a dependency of the package)';
  }
  if (!onPath('cmake')) return 'cmake is not on PATH';
  const compilers = process.env.CXX ? [process.env.CXX] : ['c++', 'g++', 'clang++'];
  if (!compilers.some(onPath)) return `no C++ compiler on PATH (looked for ${compilers.join(', ')})`;
  const libtorch = process.env.TRITIUM_LIBTORCH_DIR;
  if (libtorch) return existsSync(join(libtorch, 'include', 'torch', 'script.h')) ? null : `TRITIUM_LIBTORCH_DIR=${libtorch} holds no libtorch`;
  const probe = spawnSync('python3', ['-c', 'import torch'], { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) return "the torch Python package is not installed (python3 -c 'import torch' fails)";
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
    const firstError = [/\berror:/i, /^CMake Error/, /error/i].map((p) => lines.find((line) => p.test(line))).find(Boolean) ?? lines.at(-1) ?? 'no output';
    return `cmake-js exited with ${result.status ?? result.signal}: ${firstError} (full log: ${LOG})`;
  }
  return null;
}

try {
  const reason = missingPiece() ?? build();
  if (reason) console.log(`@tritium/backend-pytorch: the TorchScript addon was not built (${reason}); to build it, ${FIX}.`);
  else console.log('@tritium/backend-pytorch: built the TorchScript addon (build/Release/torchscript.node).');
} catch (error) {
  console.log(`@tritium/backend-pytorch: the TorchScript addon was not built (${error instanceof Error ? error.message : String(error)}); to build it, ${FIX}.`);
}
