import { InferenceError } from '../errors.js';
import { AzureContainer } from './azure-container.js';
import { parseAzureLocation } from './azure-location.js';
import { LocalRepositoryRoot } from './local-repository-root.js';
import { ObjectStorageRoot } from './object-storage-root.js';
import type { RepositoryRoot, RepositoryRootOptions } from './repository-root.js';
import { S3Bucket } from './s3-bucket.js';
import { parseS3Location } from './s3-location.js';

/** The root for a repository path: `s3://` in S3, `as://` in Azure Storage, anything without a scheme on disk. */
export function repositoryRootFor(path: string, options: RepositoryRootOptions): RepositoryRoot {
  if (path.startsWith('s3://')) return new ObjectStorageRoot(new S3Bucket(parseS3Location(path)), options);
  if (path.startsWith('as://')) return new ObjectStorageRoot(new AzureContainer(parseAzureLocation(path)), options);
  if (path.startsWith('gs://')) {
    throw new InferenceError('UNSUPPORTED', `model repository '${path}': Google Cloud Storage (gs://) repositories are not supported; Tritium reads local directories, s3:// and as:// (docs/object-storage.md)`);
  }
  return new LocalRepositoryRoot(path, options.configName);
}
