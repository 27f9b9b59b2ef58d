import type { InferenceServer, ServerMetadata } from '@tritium/core';

/**
 * The extensions the frontends serve on top of the server's own, by the names Triton
 * reports them. The list is the same over HTTP and gRPC, as Triton's is (it comes from
 * its core, as `logging` and `trace` come from core here). Not here: cuda_shared_memory (no GPU memory).
 */
const FRONTEND_EXTENSIONS = ['classification', 'sequence', 'model_repository', 'model_repository(unload_dependents)', 'schedule_policy', 'model_configuration', 'system_shared_memory', 'binary_tensor_data', 'parameters', 'statistics'];

/** The server's metadata with every extension it and the frontends offer, each once: `GET /v2` and ServerMetadata. */
export function serverMetadata(server: InferenceServer): ServerMetadata {
  const metadata = server.metadata();
  return { ...metadata, extensions: [...new Set([...metadata.extensions, ...FRONTEND_EXTENSIONS])] };
}
