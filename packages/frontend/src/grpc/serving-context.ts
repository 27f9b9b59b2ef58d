import type { InferenceServer } from '@tritium/core';
import type { ClientSharedMemory } from '../shared-memory/client-shared-memory.js';

/** What the gRPC handlers serve from: the server and its shared-memory regions. */
export interface ServingContext {
  readonly server: InferenceServer;
  readonly memory: ClientSharedMemory;
  /** Set by close(): streams still open refuse new requests while those in flight finish, as in Triton. */
  closing: boolean;
}
