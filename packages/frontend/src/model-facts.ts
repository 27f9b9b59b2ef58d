import type { InferenceServer, NormalizedModelInput } from '@tritium/core';

/** What the frontends read of a served model version's configuration while answering its requests. */
export interface ModelFacts {
  /** Its transaction policy: any number of responses per request. */
  readonly decoupled: boolean;
  /** Triton's max_batch_size: above 0, the first dimension of every input and output is the batch. */
  readonly maxBatchSize: number;
  /** The configured inputs (a raw binary HTTP request is read by them). */
  readonly inputs: readonly NormalizedModelInput[];
}

/**
 * Each served model's facts, read from its configuration once and forgotten whenever
 * the model changes state (a reload may change any of them), so that a request costs a
 * map lookup rather than a configuration copy. One per server, shared by its frontends
 * (see `modelFacts`).
 */
export class ModelFactsCache {
  /** Each model's facts by the version asked for (undefined: the server's choice). */
  private readonly models = new Map<string, Map<number | undefined, ModelFacts>>();
  /** Bumped by every state change, so that a lookup that raced one is not kept. */
  private generation = 0;

  constructor(private readonly server: InferenceServer) {
    server.on('modelStateChanged', ({ name }) => {
      this.generation++;
      this.models.delete(name);
    });
  }

  /** The facts when they are known already: no promise to wait on. */
  known(name: string, version?: number): ModelFacts | undefined {
    return this.models.get(name)?.get(version);
  }

  /** The facts of the version a request names; rejects as the server does for a model (or version) it does not serve. */
  async of(name: string, version?: number): Promise<ModelFacts> {
    const known = this.known(name, version);
    if (known) return known;
    const generation = this.generation;
    const config = await this.server.modelConfig(name, version);
    const facts = { decoupled: config.model_transaction_policy?.decoupled === true, maxBatchSize: config.max_batch_size ?? 0, inputs: config.input ?? [] };
    if (generation === this.generation) {
      let versions = this.models.get(name);
      if (!versions) this.models.set(name, (versions = new Map()));
      versions.set(version, facts);
    }
    return facts;
  }

  /** False for a model the server does not serve: the request then fails there, saying why. */
  async isDecoupled(name: string, version?: number): Promise<boolean> {
    return (this.known(name, version) ?? (await this.of(name, version).catch(() => undefined)))?.decoupled === true;
  }
}

const caches = new WeakMap<InferenceServer, ModelFactsCache>();

/** The server's model facts: one cache that every frontend of that server shares. */
export function modelFacts(server: InferenceServer): ModelFactsCache {
  let cache = caches.get(server);
  if (!cache) caches.set(server, (cache = new ModelFactsCache(server)));
  return cache;
}
