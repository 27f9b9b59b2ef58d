import { requestShape } from '../config/request-shape.js';
import type { NormalizedModelConfig } from '../config/schema.js';
import { dataTypeFromConfig } from '../tensor/datatype.js';
import type { ModelMetadata, ServerMetadata, TensorMetadata } from '../types.js';
import { VERSION } from '../version.js';

/** Triton's default server id, which clients check. */
const DEFAULT_SERVER_ID = 'triton';

/** The server's metadata, as Triton's server metadata endpoint gives it. */
export function serverMetadata(serverId: string | undefined): ServerMetadata {
  return { name: serverId ?? DEFAULT_SERVER_ID, version: VERSION, extensions: ['model_configuration', 'model_repository', 'statistics', 'logging', 'trace'] };
}

/** A model's metadata from the version asked about: its tensors as a request sees them, and every version serving. */
export function modelMetadataOf(
  name: string,
  served: { readonly context: { readonly config: NormalizedModelConfig } },
  versions: readonly { readonly version: number }[],
): ModelMetadata {
  const config = served.context.config;
  const describe = (t: { name?: string; data_type?: string; dims?: readonly number[] }): TensorMetadata => ({
    name: t.name!,
    datatype: dataTypeFromConfig(t.data_type!),
    shape: requestShape(config, t),
  });
  return {
    name,
    versions: versions.map((s) => String(s.version)),
    platform: config.platform || config.backend || '',
    inputs: (config.input ?? []).map(describe),
    outputs: (config.output ?? []).map(describe),
  };
}
