import { InferenceError } from '@tritium/core';
import type { Handler } from './http-context.js';
import { cudaRegisterRefusal } from '../shared-memory/client-shared-memory.js';
import { invalid } from '../wire-values.js';
import { optionalJsonBody } from './request-body.js';
import { optionalCount, optionalString, requiredField } from './request-json.js';
import { sendEmpty, sendJson } from './responses.js';
import type { Route } from './routes.js';

type SharedMemoryRoute = Extract<Route, { kind: 'shared-memory' }>;

/** Triton's system and CUDA shared-memory extensions: status, register and unregister. */
export const sharedMemory: Handler<SharedMemoryRoute> = async (context, route, req, res) => {
  const { memory } = context;
  // As Triton, checked first: without --allow-client-shm no region (system or CUDA) is registered or unregistered.
  if (route.action !== 'status') memory.checkAllowed();
  if (route.action === 'register' && route.region === undefined) {
    throw invalid(`'region name' is necessary to register ${route.memory} shared memory region`);
  }
  if (route.memory === 'cuda') return cudaSharedMemory(route, res);
  switch (route.action) {
    case 'status':
      return sendJson(res, 200, JSON.stringify(memory.status(route.region).map(({ name, key, offset, byteSize }) => ({ name, key, offset, byte_size: byteSize }))));
    case 'register': {
      const body = await optionalJsonBody(req, context.bodyLimitBytes, 'register request');
      const where = 'the shared memory register request';
      const key = requiredField(optionalString(body, 'key', where), 'key', where);
      const byteSize = requiredField(optionalCount(body, 'byte_size', where), 'byte_size', where);
      memory.register(route.region!, key, optionalCount(body, 'offset', where) ?? 0, byteSize);
      return sendEmpty(res);
    }
    case 'unregister':
      memory.unregister(route.region);
      return sendEmpty(res);
  }
};

/**
 * This server has no GPU memory, so it answers as a Triton built without GPU support:
 * no regions to report or unregister, and registering fails saying why.
 */
function cudaSharedMemory(route: SharedMemoryRoute, res: Parameters<Handler>[3]): void {
  const region = route.region;
  switch (route.action) {
    case 'status':
      if (region !== undefined) throw new InferenceError('NOT_FOUND', `Unable to find cuda shared memory region: '${region}'`);
      return sendJson(res, 200, '[]');
    case 'register':
      throw cudaRegisterRefusal(region ?? '');
    case 'unregister':
      return sendEmpty(res);
  }
}
