import type { InferenceServer } from '@tritium/core';
import type { ModelFactsCache } from '../model-facts.js';
import type { SystemSharedMemory } from '../shared-memory/system-shared-memory.js';

/** What the gRPC handlers serve from: the server, its shared-memory regions, and which models are decoupled. */
export interface ServingContext {
  readonly server: InferenceServer;
  readonly memory: SystemSharedMemory;
  readonly decoupled: ModelFactsCache;
}
