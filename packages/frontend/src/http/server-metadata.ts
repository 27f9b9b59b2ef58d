import type { InferenceServer } from '@tritium/core';

/**
 * The extensions this frontend serves on top of the server's own, by the names Triton
 * reports them. Not here: cuda_shared_memory (no GPU memory), trace, logging, and
 * model_repository(unload_dependents).
 */
const HTTP_EXTENSIONS = [
  'classification',
  'sequence',
  'model_repository',
  'schedule_policy',
  'model_configuration',
  'system_shared_memory',
  'binary_tensor_data',
  'parameters',
  'statistics',
];

/** The `GET /v2` body: the server's metadata with every extension it and this frontend offer. */
export function serverMetadataJson(server: InferenceServer): string {
  const metadata = server.metadata();
  return JSON.stringify({ ...metadata, extensions: [...new Set([...metadata.extensions, ...HTTP_EXTENSIONS])] });
}
