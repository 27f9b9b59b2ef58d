import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { InferenceError } from '@tritium/core';
import type { ChatTemplate } from './chat-template.js';
import { ggufChatTemplate } from './gguf-chat-template.js';
import type { CatalogModel } from './model-catalog.js';
import { isFile } from './model-directory.js';

/** Where a model's chat template may come from; each says undefined when it has none. */
type ChatTemplateSource = (model: CatalogModel) => Promise<ChatTemplate | undefined>;

/** The config parameter a backend's auto-complete (or the model's author) fills with the template's text. */
export const CHAT_TEMPLATE_PARAMETER = 'chat_template';

/** The template as the `chat_template` config parameter gives it. */
const configParameter: ChatTemplateSource = async ({ facts, parameters }) => {
  const text = parameters[CHAT_TEMPLATE_PARAMETER];
  return text === undefined ? undefined : { source: `model '${facts.name}' parameter '${CHAT_TEMPLATE_PARAMETER}'`, text, bosToken: '', eosToken: '' };
};

/** `chat_template.jinja`, in the version directory or else the model's, as Hugging Face repositories now ship it. */
const templateFile: ChatTemplateSource = async (model) => {
  for (const directory of modelFileDirectories(model)) {
    const path = join(directory, 'chat_template.jinja');
    if (await isFile(path)) return { source: path, text: await readFile(path, 'utf8'), bosToken: '', eosToken: '' };
  }
  return undefined;
};

/** The `chat_template` of a Hugging Face `tokenizer_config.json`, with its BOS and EOS tokens. */
const tokenizerConfig: ChatTemplateSource = async (model) => {
  for (const directory of modelFileDirectories(model)) {
    const path = join(directory, 'tokenizer_config.json');
    if (!(await isFile(path))) continue;
    const config = JSON.parse(await readFile(path, 'utf8')) as Record<string, unknown>;
    if (typeof config.chat_template !== 'string') return undefined;
    return { source: path, text: config.chat_template, bosToken: tokenText(config.bos_token), eosToken: tokenText(config.eos_token) };
  }
  return undefined;
};

/** The metadata of the version's GGUF file (a llama.cpp model). */
const ggufMetadata: ChatTemplateSource = async ({ versionDirectory }) => (versionDirectory === undefined ? undefined : ggufChatTemplate(versionDirectory));

const SOURCES: readonly ChatTemplateSource[] = [configParameter, templateFile, tokenizerConfig, ggufMetadata];

/** The first template the sources have, in order; refused (400) when none has one. */
export async function findChatTemplate(model: CatalogModel): Promise<ChatTemplate> {
  for (const source of SOURCES) {
    const template = await source(model);
    if (template) return template;
  }
  throw new InferenceError(
    'INVALID_ARG',
    `model '${model.facts.name}' has no chat template: give it a '${CHAT_TEMPLATE_PARAMETER}' parameter, a chat_template.jinja or tokenizer_config.json file, or a GGUF file with one, or start the frontend with a chatTemplate (docs/openai.md)`,
  );
}

/** Where a model's own files (tokenizer, template) lie: its version directory first, then its directory. */
export function modelFileDirectories({ directory, versionDirectory }: CatalogModel): string[] {
  return [versionDirectory, directory].filter((dir): dir is string => dir !== undefined);
}

/** A special token as tokenizer_config.json writes it: a string, or an object with `content`. */
function tokenText(token: unknown): string {
  if (typeof token === 'string') return token;
  const content = (token as { content?: unknown } | null)?.content;
  return typeof content === 'string' ? content : '';
}
