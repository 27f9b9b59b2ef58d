import type { DirectorySnapshot } from './fingerprint.js';

/** A model found in a repository: its directory, the config file chosen, its version directories. */
export interface ModelSource {
  readonly name: string;
  readonly directory: string;
  /** The config file in use: `configs/<configName>.pbtxt` when selected and present, else `config.pbtxt`; undefined when neither exists. */
  readonly configPath: string | undefined;
  /** Numeric version directories, ascending; other directories are ignored. */
  readonly versions: readonly number[];
  /** Set when the directory was written for one load (files sent with it): its owner removes it once nothing loaded from it serves. */
  readonly removeDirectory?: () => Promise<void>;
  /**
   * Set for a model kept in object storage: brings its files into `directory` (a local
   * copy), which a load must await before reading anything there.
   */
  readonly localize?: () => Promise<void>;
  /** What poll mode compares for a model kept in object storage (its objects' ETags and sizes); a directory is snapshotted instead. */
  readonly fingerprint?: DirectorySnapshot;
}
