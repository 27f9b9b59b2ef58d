import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Tokenizer } from '@huggingface/tokenizers';
import { InferenceError } from '@tritium/core';
import { modelFileDirectories } from './chat-template-source.js';
import type { CatalogModel } from './model-catalog.js';
import { isFile } from './model-directory.js';

/**
 * A model's Hugging Face tokenizer: `tokenizer.json` (and `tokenizer_config.json` beside
 * it, when there is one) in its version directory or else its directory. Refused (400)
 * when it has none.
 */
export async function modelTokenizer(model: CatalogModel): Promise<Tokenizer> {
  for (const directory of modelFileDirectories(model)) {
    const path = join(directory, 'tokenizer.json');
    if (!(await isFile(path))) continue;
    const configPath = join(directory, 'tokenizer_config.json');
    const config = (await isFile(configPath)) ? JSON.parse(await readFile(configPath, 'utf8')) : {};
    return new Tokenizer(JSON.parse(await readFile(path, 'utf8')), config);
  }
  throw new InferenceError('INVALID_ARG', `model '${model.facts.name}' takes token ids but has no tokenizer.json in its model or version directory (docs/openai.md)`);
}
