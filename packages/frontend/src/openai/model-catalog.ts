import { join } from 'node:path';
import type { Tokenizer } from '@huggingface/tokenizers';
import type { InferenceServer, ModelFacts } from '@tritium/core';
import { ChatPrompt } from './chat-template.js';
import { findChatTemplate } from './chat-template-source.js';
import { modelDirectory } from './model-directory.js';
import { modelTokenizer } from './model-tokenizer.js';
import { OpenAIError } from './openai-error.js';

/** A served model version as the OpenAI routes see it. */
export interface CatalogModel {
  readonly facts: ModelFacts;
  /** Its config's parameters (string values). */
  readonly parameters: Readonly<Record<string, string>>;
  /** `<repository>/<model>` and `<repository>/<model>/<version>`, when the frontend knows the repository and it has them. */
  readonly directory: string | undefined;
  readonly versionDirectory: string | undefined;
}

/**
 * The models the OpenAI routes serve: what each served version has, its chat template and
 * its tokenizer, each worked out once per loaded version (a reload brings new facts, so
 * the old entries are forgotten with them).
 */
export class ModelCatalog {
  private readonly models = new WeakMap<ModelFacts, Promise<CatalogModel>>();
  private readonly prompts = new WeakMap<ModelFacts, Promise<ChatPrompt>>();
  private readonly tokenizers = new WeakMap<ModelFacts, Promise<Tokenizer>>();

  /**
   * `roots`: the model repository, where models' own files are read (chat template,
   * tokenizer, GGUF). `chatTemplate`: one template for every model, before any of theirs.
   */
  constructor(
    private readonly server: InferenceServer,
    private readonly roots: readonly string[],
    private readonly chatTemplate: string | undefined,
  ) {}

  /** The model the request's `model` names (its newest served version); 404 when none is served. */
  async model(name: string): Promise<CatalogModel> {
    let facts: ModelFacts;
    try {
      facts = this.server.modelFacts(name);
    } catch (error) {
      throw new OpenAIError(404, `The model '${name}' does not exist or is not ready: ${(error as Error).message}`, { param: 'model', code: 'model_not_found' });
    }
    return cached(this.models, facts, () => this.describe(facts));
  }

  chatPrompt(model: CatalogModel): Promise<ChatPrompt> {
    return cached(this.prompts, model.facts, async () => {
      if (this.chatTemplate !== undefined) return new ChatPrompt({ source: "the frontend's chatTemplate option", text: this.chatTemplate, bosToken: '', eosToken: '' });
      return new ChatPrompt(await findChatTemplate(model));
    });
  }

  tokenizer(model: CatalogModel): Promise<Tokenizer> {
    return cached(this.tokenizers, model.facts, () => modelTokenizer(model));
  }

  private async describe(facts: ModelFacts): Promise<CatalogModel> {
    const config = await this.server.modelConfig(facts.name, facts.version);
    const parameters = Object.fromEntries(Object.entries(config.parameters).map(([key, { string_value }]) => [key, string_value]));
    const directory = await modelDirectory(this.roots, facts.name);
    return { facts, parameters, directory, versionDirectory: directory && join(directory, String(facts.version)) };
  }
}

/** The entry for `facts`, made once; a failure is not kept, so the next request tries again. */
function cached<T>(map: WeakMap<ModelFacts, Promise<T>>, facts: ModelFacts, make: () => Promise<T>): Promise<T> {
  let entry = map.get(facts);
  if (!entry) {
    entry = make();
    map.set(facts, entry);
    entry.catch(() => map.delete(facts));
  }
  return entry;
}
