import { closeSync, constants, fstatSync, openSync } from 'node:fs';
import { InferenceError } from '@tritium/core';

/**
 * Read-write; never through a symbolic link (the key is one name in /dev/shm, so its last
 * component is the only one a client controls); and without waiting for a FIFO's other
 * end, so that one is refused by the type check instead of blocking the event loop.
 */
const OPEN_FLAGS = constants.O_RDWR | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Which file a key named when it was opened: a key that names another file later is refused. */
export interface FileIdentity {
  readonly dev: bigint;
  readonly ino: bigint;
}

export interface RegionFile extends FileIdentity {
  readonly fd: number;
  readonly size: number;
}

/** The file shm_open would open for `key` on Linux. */
function regionPath(key: string): string {
  return `/dev/shm/${key.replace(/^\//, '')}`;
}

/**
 * Opens the regular file `key` names, or throws Triton's INTERNAL "Unable to open shared
 * memory region" saying why not. The type is checked on the descriptor, after opening,
 * so the file checked is the file used. The caller closes `fd`.
 */
export function openRegionFile(key: string): RegionFile {
  const unable = (reason: string) => new InferenceError('INTERNAL', `Unable to open shared memory region: '${key}': ${reason}`);
  let fd: number;
  try {
    fd = openSync(regionPath(key), OPEN_FLAGS);
  } catch (error) {
    throw unable((error as NodeJS.ErrnoException).code === 'ELOOP' ? 'it is a symbolic link' : (error as Error).message);
  }
  const stats = fstatSync(fd, { bigint: true });
  if (!stats.isFile()) {
    closeSync(fd);
    throw unable('it is not a regular file');
  }
  return { fd, dev: stats.dev, ino: stats.ino, size: Number(stats.size) };
}

/** The file's size now (a client may truncate it at any time). */
export function currentSize(fd: number): number {
  return fstatSync(fd).size;
}
