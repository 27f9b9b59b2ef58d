import { fileURLToPath } from 'node:url';
import { loadAddon } from '@tritium/native-addon';

/** The native addon: mapping a file descriptor read/write and shared, and reserving its blocks. */
export interface SharedMemoryAddon {
  /**
   * mmap(PROT_READ | PROT_WRITE, MAP_SHARED) of `byteLength` bytes of the open file `fd`
   * from offset 0. The ArrayBuffer unmaps itself when it is collected, so the descriptor
   * may be closed (and the file unlinked) at once. Throws with the errno text on failure,
   * and refuses a length past the file's end (touching it would raise SIGBUS).
   */
  map(fd: number, byteLength: number): ArrayBuffer;
  /** posix_fallocate of the file's first `byteLength` bytes: ENOSPC now rather than SIGBUS on a later write to a full /dev/shm. */
  reserve(fd: number, byteLength: number): void;
}

// src/native.ts under vitest and tsx, dist/index.{js,cjs} once built: both one level
// below the package root, where cmake-js puts build/Release (and the install script its
// native-build.json and native-build.log).
const PACKAGE_ROOT = fileURLToPath(new URL('..', import.meta.url));
const ADDON_URL = new URL('../build/Release/shared_memory.node', import.meta.url);

let addon: SharedMemoryAddon | undefined;

/** Loads the addon on first use; throws an Error saying what is missing, what failed at install, and how to build it. */
export function loadSharedMemoryAddon(): SharedMemoryAddon {
  addon ??= loadAddonFrom(fileURLToPath(ADDON_URL));
  return addon;
}

/** The loader behind loadSharedMemoryAddon, with the path (and package root) given: tests point it elsewhere. */
export function loadAddonFrom(path: string, packageRoot = PACKAGE_ROOT): SharedMemoryAddon {
  if (process.platform === 'win32') {
    throw new Error('the shared-memory addon of @tritium/backend-python does not exist on Windows: it maps files with POSIX mmap');
  }
  return loadAddon<SharedMemoryAddon>({
    path,
    packageRoot,
    packageName: '@tritium/backend-python',
    what: 'the shared-memory addon',
    needs: 'install cmake and a C++ compiler',
  });
}
