import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { InferenceError } from '../errors.js';
import { pathInside } from '../model/path-inside.js';
import type { RepositoryAgent, RepositoryAgentModel } from './repository-agent.js';

/**
 * Triton's checksum agent: each parameter `<algorithm>:<file>` (the file relative to the
 * model directory) gives the file's expected digest in hex; a file whose digest differs
 * fails the load. MD5 only, as Triton's; texts are Triton's. A file outside the model
 * directory is refused: a client's config override must not learn digests of other files.
 */
export const checksumAgent: RepositoryAgent = {
  name: 'checksum',
  async modelAction(model, action) {
    if (action !== 'load') return;
    for (const [key, expected] of Object.entries(model.parameters)) await checkFile(model, key, expected);
  },
};

async function checkFile(model: RepositoryAgentModel, key: string, expected: string): Promise<void> {
  const colon = key.indexOf(':');
  if (colon < 0) throw new InferenceError('INVALID_ARG', `failed to parse key: ${key}`);
  const algorithm = key.slice(0, colon);
  if (algorithm.toLowerCase() !== 'md5') throw new InferenceError('UNSUPPORTED', `Unsupported checksum algorithm: ${algorithm}`);
  const file = key.slice(colon + 1);
  const path = await pathInside(model.location, file, `checksum agent: file`);
  const got = await md5Of(path).catch((error: NodeJS.ErrnoException) => {
    throw new InferenceError('INVALID_ARG', `failed to open text file for read ${file}: ${error.message}`, { cause: error });
  });
  if (got !== expected) throw new InferenceError('INVALID_ARG', `Mismatched MD5 hash for file ${file}, expect: ${expected}, got: ${got}`);
}

/** Read in chunks, as model files may be gigabytes; 1 MiB ones hash faster here than the 64 KiB default. */
async function md5Of(path: string): Promise<string> {
  const hash = createHash('md5');
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 })) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
