import { InferenceError } from '../errors.js';

/** Where an `as://` repository is: Triton's `as://account_name/container_name/path`. */
export interface AzureLocation {
  readonly url: string;
  readonly account: string;
  readonly container: string;
  /** '' for the container's root, else the path with a trailing '/'. */
  readonly prefix: string;
}

const ACCOUNT = /^[a-z0-9]{3,24}$/;
const CONTAINER = /^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/;

export function parseAzureLocation(url: string): AzureLocation {
  const parts = url.slice('as://'.length).split('/').filter((part) => part !== '');
  const [account, container, ...path] = parts;
  if (account === undefined || !ACCOUNT.test(account) || container === undefined || !CONTAINER.test(container)) {
    throw new InferenceError('INVALID_ARG', `model repository '${url}' names no valid storage account and container: expected as://account_name/container_name/path`);
  }
  if (path.some((part) => part === '.' || part === '..')) throw new InferenceError('INVALID_ARG', `model repository '${url}': '.' and '..' are not allowed in an Azure Storage path`);
  return { url, account, container, prefix: path.length ? `${path.join('/')}/` : '' };
}
