import type { ServiceDefinition } from '@grpc/grpc-js';
import { loadSync, type Options } from '@grpc/proto-loader';
import { protoDirectory } from '../proto-directory.js';

/**
 * How messages reach the handlers: proto field names; 64-bit integers as decimal
 * strings (exact, and cheap to turn into numbers or BigInts); bytes as Buffers that
 * view the received message (raw tensor contents are never copied here); repeated
 * and map fields always present; which member of a oneof is set named by the oneof.
 * Defaults of absent scalars are not filled in, to keep decoding cheap.
 */
const LOADER_OPTIONS: Options = { keepCase: true, longs: String, enums: String, defaults: false, arrays: true, objects: true, oneofs: true };

/** Triton's inference service and gRPC's health service, as @grpc/grpc-js serves them. */
export function loadServiceDefinitions(): { inference: ServiceDefinition; health: ServiceDefinition } {
  const directory = protoDirectory();
  const definitions = loadSync(['grpc_service.proto', 'health.proto'], { ...LOADER_OPTIONS, includeDirs: [directory] });
  return {
    inference: definitions['inference.GRPCInferenceService'] as ServiceDefinition,
    health: definitions['grpc.health.v1.Health'] as ServiceDefinition,
  };
}
