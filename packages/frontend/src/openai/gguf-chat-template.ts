import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { gguf } from '@huggingface/gguf';
import { InferenceError } from '@tritium/core';
import type { ChatTemplate } from './chat-template.js';

/**
 * The chat template a GGUF file carries in its metadata (`tokenizer.chat_template`), with
 * its BOS and EOS tokens, which templates write as `bos_token` and `eos_token`. The file is
 * the one `.gguf` file of the version directory. Undefined when there is none, or it has
 * no template.
 */
export async function ggufChatTemplate(versionDirectory: string): Promise<ChatTemplate | undefined> {
  const files = (await readdir(versionDirectory).catch(() => [])).filter((file) => file.endsWith('.gguf'));
  if (files.length === 0) return undefined;
  if (files.length > 1) {
    throw new InferenceError('INVALID_ARG', `cannot tell which GGUF file holds the chat template in '${versionDirectory}': it has ${files.join(', ')}; give the model a 'chat_template' parameter`);
  }
  const path = join(versionDirectory, files[0]!);
  // Read as plain keys: the package's metadata type knows only the keys of the architectures it lists.
  const metadata = (await gguf(path, { allowLocalFile: true })).metadata as unknown as Readonly<Record<string, unknown>>;
  const template = metadata['tokenizer.chat_template'];
  if (typeof template !== 'string') return undefined;
  const tokens = metadata['tokenizer.ggml.tokens'];
  const token = (key: string) => {
    const id = metadata[key];
    return typeof id === 'number' && Array.isArray(tokens) && typeof tokens[id] === 'string' ? tokens[id] : '';
  };
  return { source: `the GGUF metadata of ${path}`, text: template, bosToken: token('tokenizer.ggml.bos_token_id'), eosToken: token('tokenizer.ggml.eos_token_id') };
}
