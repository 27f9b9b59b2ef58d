import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The native addon: one job, mapping a file descriptor read/write and shared. */
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
// below the package root, where cmake-js puts build/Release.
const ADDON_URL = new URL('../build/Release/shared_memory.node', import.meta.url);
const FIX = 'install cmake and a C++ compiler, then run `pnpm --filter @tritium/backend-python build:native`';

let addon: SharedMemoryAddon | undefined;

/** Loads the addon on first use; throws an Error saying what is missing and how to fix it. */
export function loadSharedMemoryAddon(): SharedMemoryAddon {
  addon ??= loadAddonFrom(fileURLToPath(ADDON_URL));
  return addon;
}

/** The loader behind loadSharedMemoryAddon, with the path given (tests point it elsewhere). */
export function loadAddonFrom(path: string): SharedMemoryAddon {
  if (process.platform === 'win32') {
    throw new Error('the shared-memory addon of @tritium/backend-python does not exist on Windows: it maps files with POSIX mmap');
  }
  let reason: string;
  if (!existsSync(path)) {
    reason = `${path} does not exist`;
  } else {
    try {
      return createRequire(import.meta.url)(path) as SharedMemoryAddon;
    } catch (error) {
      reason = `${path} does not load: ${error instanceof Error ? error.message : String(error)}`;
    }
  }
  throw new Error(`the shared-memory addon of @tritium/backend-python is not built (${reason}): ${FIX}`);
}
