import type { InferenceServer } from '@tritium/core';

/**
 * Whether the model version a request names is decoupled (answers any number of times),
 * read from its facts; false for one the server does not serve, so that the request
 * itself then fails, saying why as the server does.
 */
export function isDecoupled(server: InferenceServer, model: string, version?: number): boolean {
  try {
    return server.modelFacts(model, version).decoupled;
  } catch {
    return false;
  }
}
