export { Arena } from './arena.js';
export type { Allocation, Allocations } from './arena.js';
export { PeerRegions } from './peer-regions.js';
export { SharedRegion, removeRegions, sharedMemoryDirectory } from './shared-region.js';
export { loadSharedMemoryAddon } from './native.js';
export type { SharedMemoryAddon } from './native.js';
