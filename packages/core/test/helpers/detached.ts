import type { ModelContext, ModelServer } from '@tritium/core/backend';
import { serverLoggerOf, type ServerLogger } from '../../src/observability/server-logger.js';

const refuse = (): never => {
  throw new Error('no server: the model was loaded directly');
};

/** What a model loaded without a server gets in its context: a server that refuses every call, the console (as a server logs by default), and no requests in flight. */
export const DETACHED: Pick<ModelContext, 'server' | 'requestsInFlight'> & { readonly logger: ServerLogger } = {
  server: {
    infer: async () => refuse(),
    startInference: refuse,
    inferStream: refuse,
    loadModel: async () => refuse(),
    unloadModel: async () => refuse(),
    isModelReady: async () => false,
    modelConfig: async () => refuse(),
  } satisfies ModelServer,
  logger: serverLoggerOf(undefined),
  requestsInFlight: () => 0,
};
