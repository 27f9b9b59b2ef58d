import type { ObjectStorageOptions } from '../types.js';
import type { ModelSource } from './model-source.js';

/** One repository of models, wherever it is kept: a directory, or a prefix in a bucket. */
export interface RepositoryRoot {
  /** The repository's path as given, for messages. */
  readonly location: string;
  /** Every model directly under the root, by name, hidden names left out; fails when the root cannot be read. */
  models(): Promise<Map<string, ModelSource>>;
  /** The model as the root holds it now; undefined when the root has no such model. */
  describe(name: string): Promise<ModelSource | undefined>;
  /** Lets go of connections; the root is not used again. */
  close(): Promise<void>;
}

export interface RepositoryRootOptions {
  /** Triton's --model-config-name. */
  readonly configName?: string;
  readonly objectStorage?: ObjectStorageOptions;
}
