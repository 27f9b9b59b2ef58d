// The package's install script (and `build:native`, with --strict): builds the TorchScript
// addon with cmake-js against the libtorch of the `torch` Python package (or
// TRITIUM_LIBTORCH_DIR) when it can, and never fails the install when it cannot. The result
// and the build log stay in build/ (native-build.json, native-build.log), and a PyTorch model
// says what failed when it loads (src/native.ts). The work is @tritium/native-addon's.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildAddon } from '@tritium/native-addon/install';

/** Why libtorch is not there to build against, or null. */
function missingTorch() {
  const libtorch = process.env.TRITIUM_LIBTORCH_DIR;
  if (libtorch) return existsSync(join(libtorch, 'include', 'torch', 'script.h')) ? null : `TRITIUM_LIBTORCH_DIR=${libtorch} holds no libtorch`;
  const probe = spawnSync('python3', ['-c', 'import torch'], { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) return "the torch Python package is not installed (python3 -c 'import torch' fails)";
  return null;
}

buildAddon({
  packageRoot: fileURLToPath(new URL('..', import.meta.url)),
  packageName: '@tritium/backend-pytorch',
  what: 'the TorchScript addon',
  addonFile: 'build/Release/torchscript.node',
  needs: 'install the torch Python package (`pip install torch`; the CPU wheel will do), cmake and a C++ compiler',
  unsupported: process.platform !== 'linux' ? 'the addon is built for Linux only' : null,
  missing: missingTorch,
  strict: process.argv.includes('--strict'),
});
