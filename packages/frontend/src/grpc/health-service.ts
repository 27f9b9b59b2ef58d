import type { UntypedServiceImplementation } from '@grpc/grpc-js';
import type { InferenceServer } from '@tritium/core';
import { unary } from './unary-call.js';

/** gRPC's health check as Triton answers it: SERVING while the server is ready, whatever service is named. */
export function healthService(server: InferenceServer): UntypedServiceImplementation {
  return { Check: unary(() => ({ status: server.isReady() ? 'SERVING' : 'NOT_SERVING' })) };
}
