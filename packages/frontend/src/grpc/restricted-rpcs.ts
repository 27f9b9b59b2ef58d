import { status, type sendUnaryData, type ServerDuplexStream, type ServerUnaryCall, type ServerWritableStream, type UntypedHandleCall, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { InferenceError } from '@tritium/core';
import type { ApiRestrictions, RestrictedCategory } from '../restricted-api.js';

/** The header prefix Triton puts before a --grpc-restricted-protocol key. */
export const RESTRICTED_PROTOCOL_HEADER_PREFIX = 'triton-grpc-protocol-';

/** The category of each rpc of GRPCInferenceService and grpc.health.v1.Health, as Triton's gRPC server checks them. */
export const RPC_CATEGORIES: Readonly<Record<string, RestrictedCategory>> = {
  ServerLive: 'health',
  ServerReady: 'health',
  ModelReady: 'health',
  Check: 'health',
  Watch: 'health',
  ServerMetadata: 'metadata',
  ModelMetadata: 'metadata',
  ModelConfig: 'model-config',
  ModelStatistics: 'statistics',
  ModelInfer: 'inference',
  ModelStreamInfer: 'inference',
  RepositoryIndex: 'model-repository',
  RepositoryModelLoad: 'model-repository',
  RepositoryModelUnload: 'model-repository',
  SystemSharedMemoryStatus: 'shared-memory',
  SystemSharedMemoryRegister: 'shared-memory',
  SystemSharedMemoryUnregister: 'shared-memory',
  CudaSharedMemoryStatus: 'shared-memory',
  CudaSharedMemoryRegister: 'shared-memory',
  CudaSharedMemoryUnregister: 'shared-memory',
  TraceSetting: 'trace',
  LogSettings: 'logging',
};

/**
 * `service` with each rpc of a restricted category refusing calls that lack its header
 * (metadata), before the handler runs: UNAVAILABLE, "This protocol is restricted,
 * expecting header '<header>'", as Triton ends them. Rpcs of open categories are left
 * as they are.
 */
export function restrictService(service: UntypedServiceImplementation, restrictions: ApiRestrictions): UntypedServiceImplementation {
  return Object.fromEntries(Object.entries(service).map(([rpc, handler]) => [rpc, restrictRpc(rpc, handler, restrictions)]));
}

/** The rpcs served: unary (with a callback), ModelStreamInfer and Watch. */
type Call = ServerUnaryCall<unknown, unknown> | ServerDuplexStream<unknown, unknown> | ServerWritableStream<unknown, unknown>;

function restrictRpc(rpc: string, handler: UntypedHandleCall, restrictions: ApiRestrictions): UntypedHandleCall {
  const category = RPC_CATEGORIES[rpc];
  // An rpc with no category would be open whatever the operator restricted: refuse to serve it.
  if (!category) throw new InferenceError('INTERNAL', `the gRPC rpc '${rpc}' has no restricted-protocol category`);
  if (!restrictions.isRestricted(category)) return handler;
  const serve = handler as (call: Call, callback?: sendUnaryData<unknown>) => void;
  const restricted = (call: Call, callback?: sendUnaryData<unknown>) => {
    const header = restrictions.missingHeader(category, (name) => call.metadata.get(name)[0]?.toString());
    if (header === undefined) return serve(call, callback);
    const refusal = { code: status.UNAVAILABLE, details: `This protocol is restricted, expecting header '${header}'` };
    // Unary rpcs answer through their callback; a stream ends with the error as its status.
    if (callback) callback(refusal);
    else call.emit('error', refusal);
  };
  return restricted as UntypedHandleCall;
}
