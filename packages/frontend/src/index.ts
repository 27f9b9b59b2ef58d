export type { ListenOptions, RunningFrontend } from './listen.js';
export { SystemSharedMemory, type SharedMemoryRef, type SharedMemoryRegionStatus } from './shared-memory/system-shared-memory.js';
export { DEFAULT_MAX_SHARED_MEMORY_REGIONS, type SharedMemoryOptions } from './shared-memory/client-shared-memory.js';
export { startMetricsFrontend, type MetricsFrontendOptions, METRICS_PATH, DEFAULT_METRICS_PORT, METRICS_CONTENT_TYPE } from './metrics/metrics-frontend.js';
export { startHttpFrontend, type HttpFrontendOptions } from './http/http-frontend.js';
export { startGrpcFrontend, type GrpcFrontendOptions } from './grpc/grpc-frontend.js';
export { protoDirectory } from './proto-directory.js';
export { RESTRICTED_CATEGORIES, type RestrictedApis, type RestrictedCategory, type Restriction } from './restricted-api.js';
export { startOpenAIFrontend, DEFAULT_OPENAI_PORT, type OpenAIFrontendOptions } from './openai/openai-frontend.js';
