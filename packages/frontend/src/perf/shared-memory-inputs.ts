import { randomBytes } from 'node:crypto';
import { rm, writeFile } from 'node:fs/promises';
import { tensorBytes } from '@tritium/core';
import type { RequestInputs } from './perf-client.js';

/** Where one input's bytes lie: the region's registered name, and the span in it. */
export interface SharedMemorySpan {
  readonly region: string;
  readonly offset: number;
  readonly byteSize: number;
}

/** Each request's inputs, by name, as spans of one system shared-memory region. */
export type SharedMemoryPlacement = Readonly<Record<string, SharedMemorySpan>>;

/** A region made for the run: its key (the /dev/shm file), name and size, and each request's spans in it. */
export interface SharedMemoryInputs {
  readonly region: string;
  readonly key: string;
  readonly byteSize: number;
  readonly placements: readonly SharedMemoryPlacement[];
  /** Removes the region's file. */
  remove(): Promise<void>;
}

/**
 * Writes every request's inputs, one after another, into a new system shared-memory
 * region (a file in /dev/shm, as shm_open makes), as perf_analyzer's --shared-memory
 * system: the client registers it with the server and names spans of it in place of data.
 */
export async function sharedMemoryInputs(requests: readonly RequestInputs[]): Promise<SharedMemoryInputs> {
  const name = `tritium-perf-${process.pid}-${randomBytes(4).toString('hex')}`;
  const chunks: Uint8Array[] = [];
  let offset = 0;
  const placements = requests.map((inputs) =>
    Object.fromEntries(Object.entries(inputs).map(([input, tensor]) => {
      const bytes = tensorBytes(tensor);
      chunks.push(bytes);
      const span = { region: name, offset, byteSize: bytes.length };
      offset += bytes.length;
      return [input, span];
    })),
  );
  const path = `/dev/shm/${name}`;
  await writeFile(path, Buffer.concat(chunks));
  return { region: name, key: `/${name}`, byteSize: offset, placements, remove: () => rm(path, { force: true }) };
}
