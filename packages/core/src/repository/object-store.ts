/** One object as a listing gives it. */
export interface StoredObject {
  readonly key: string;
  readonly etag: string;
  readonly size: number;
}

/** Where a repository is in a store, whatever the store's kind. */
export interface StoreLocation {
  /** The repository's path as given, for messages. */
  readonly url: string;
  /** The repository's key prefix: '' for the store's root, else a path ending in '/'. */
  readonly prefix: string;
}

/** A bucket or container holding a model repository under a key prefix: what an object-storage root reads. */
export interface ObjectStore {
  readonly location: StoreLocation;
  /** Triton's environment variable for where this kind of store's files land (TRITON_AWS_MOUNT_DIRECTORY, ...). */
  readonly mountVariable: string;
  /** The folders under the cache that hold this store's files, one store apart from any other; the repository's prefix goes below them. */
  readonly cacheFolders: readonly string[];
  /** An object's name in messages (`s3://bucket/key`). */
  address(key: string): string;
  /** Every object under `prefix`, at any depth. */
  objects(prefix: string): Promise<StoredObject[]>;
  /** Writes the object's bytes to `file`. */
  download(object: StoredObject, file: string): Promise<void>;
  close(): Promise<void>;
}
