import type { Backend } from '@tritium/core';
import type { BackendInstance } from '@tritium/core/backend';

/** A test backend named `name` whose every model instance runs `execute`: the shape the frontend's test models share. */
export function executeBackend(name: string, execute: BackendInstance['execute']): Backend {
  return {
    name,
    defaultModelFilename: 'model.test',
    createModel: async () => ({ createInstance: async () => ({ execute }) }),
  };
}
