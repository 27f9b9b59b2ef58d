import type { InferenceServer } from '@tritium/core';
import type { ModelFactsCache } from '../model-facts.js';
import type { ClientSharedMemory } from '../shared-memory/client-shared-memory.js';

/** What the gRPC handlers serve from: the server, its shared-memory regions, and its models' facts (which are decoupled). */
export interface ServingContext {
  readonly server: InferenceServer;
  readonly memory: ClientSharedMemory;
  readonly facts: ModelFactsCache;
  /** Set by close(): streams still open refuse new requests while those in flight finish, as in Triton. */
  closing: boolean;
}
