import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { afterEach, beforeEach, expect } from 'vitest';
import { loadSharedMemoryAddon, removeRegions, sharedMemoryDirectory } from '../src/index.js';

/** Why the shared-memory tests cannot run here (printed once), or undefined when the addon loads. */
export const addonMissing: string | undefined = (() => {
  try {
    loadSharedMemoryAddon();
    return undefined;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    console.warn(`skipping the shared-memory tests: ${reason}`);
    return reason;
  }
})();

export const SHM_DIR = sharedMemoryDirectory();

/** Files in the shared-memory directory whose names start with `prefix`. */
export function filesWith(prefix: string): string[] {
  return readdirSync(SHM_DIR)
    .filter((name) => name.startsWith(prefix))
    .sort();
}

/**
 * A fresh file-name prefix for each test; after each test nothing with that prefix may be
 * left in the shared-memory directory (checked, then removed so one failure does not leak).
 */
export function useShmPrefix(): { readonly current: string } {
  const state = { current: '' };
  beforeEach(() => {
    state.current = `tritium-test-${process.pid}-${randomBytes(4).toString('hex')}`;
  });
  afterEach(() => {
    const left = filesWith(state.current);
    removeRegions(SHM_DIR, state.current);
    expect(left, 'files left in the shared-memory directory').toEqual([]);
  });
  return state;
}
