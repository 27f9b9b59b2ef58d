import type { NormalizedModelInput, NormalizedModelOutput } from '../config/schema.js';
import type { ModelContext } from '../contract/backend.js';

/** Read-only all the way down, as a deep-frozen object is. */
type Frozen<T> = T extends readonly (infer E)[] ? readonly Frozen<E>[] : T extends object ? { readonly [K in keyof T]: Frozen<T[K]> } : T;

/**
 * What a frontend reads of a served model version on every request, frozen once when the
 * version loads: handing it out costs nothing, where `modelConfig()` copies the whole
 * config on each call. A reload serves new facts; these never change.
 */
export interface ModelFacts {
  readonly name: string;
  readonly version: number;
  /** Its transaction policy: any number of responses per request. */
  readonly decoupled: boolean;
  /** Triton's max_batch_size: above 0, the first dimension of every input and output is the batch. */
  readonly maxBatchSize: number;
  readonly platform: string;
  readonly backend: string;
  readonly inputs: readonly Frozen<NormalizedModelInput>[];
  readonly outputs: readonly Frozen<NormalizedModelOutput>[];
}

/** The facts of the version `context` loads: its inputs and outputs copied, so that nothing frozen here is the config's. */
export function modelFactsOf({ name, version, config }: ModelContext): ModelFacts {
  return deepFrozen({
    name,
    version,
    decoupled: config.model_transaction_policy.decoupled,
    maxBatchSize: config.max_batch_size,
    platform: config.platform,
    backend: config.backend,
    inputs: structuredClone(config.input),
    outputs: structuredClone(config.output),
  });
}

function deepFrozen<T>(value: T): Frozen<T> {
  if (typeof value === 'object' && value !== null) {
    for (const member of Object.values(value)) deepFrozen(member);
    Object.freeze(value);
  }
  return value as Frozen<T>;
}
