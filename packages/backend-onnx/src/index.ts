export { onnxBackend, createBackend, RUNTIME_PARAMETER } from './backend.js';
export type { OnnxBackendOptions } from './backend.js';
export type { RuntimeKind } from './runtime.js';
export { DEFAULT_MAX_BATCH_SIZE } from './auto-complete.js';
export { EXECUTION_THREAD_PARAMETER } from './thread-choice.js';
