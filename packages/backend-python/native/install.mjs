// The package's install script (and `build:native`, with --strict): builds the shared-memory
// addon with cmake-js when it can, and never fails the install when it cannot. The result and
// the build log stay in build/ (native-build.json, native-build.log), and the backend says what
// failed when a model needs the addon (src/native.ts). The work is @tritium/native-addon's.
import { fileURLToPath } from 'node:url';
import { buildAddon } from '@tritium/native-addon/install';

buildAddon({
  packageRoot: fileURLToPath(new URL('..', import.meta.url)),
  packageName: '@tritium/backend-python',
  what: 'the shared-memory addon',
  addonFile: 'build/Release/shared_memory.node',
  needs: 'install cmake and a C++ compiler',
  unsupported: process.platform === 'win32' ? 'shared memory uses POSIX mmap, which Windows lacks' : null,
  strict: process.argv.includes('--strict'),
});
