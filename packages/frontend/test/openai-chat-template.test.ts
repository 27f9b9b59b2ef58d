import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { afterEach, describe, expect, it } from 'vitest';
import { startOpenAIFixture, type OpenAIFixture } from './helpers/openai-fixture.js';
import { pythonModulesMissing } from './helpers/python-modules.js';
import { WORD_LLM_CONFIG } from './helpers/word-llm-backend.js';

const ggufMissing = pythonModulesMissing('gguf');
const MAKE_GGUF = fileURLToPath(new URL('./helpers/make-template-gguf.py', import.meta.url));

/** A template that shows the special tokens it was given, and the conversation. */
const TEMPLATE = '{{ bos_token }}{% for m in messages %}[{{ m.role }}] {{ m.content }} {% endfor %}{% if add_generation_prompt %}[assistant]{% endif %}';

let fx: OpenAIFixture | undefined;
afterEach(async () => {
  await fx?.stop();
  fx = undefined;
});

/** The prompt the model was given, as the word model (echo) sends it back: its first max_tokens words, upper-cased. */
async function promptWords(messages: OpenAI.ChatCompletionMessageParam[], maxTokens: number): Promise<string> {
  const client = new OpenAI({ baseURL: fx!.baseURL, apiKey: 'unused', maxRetries: 0 });
  const chat = await client.chat.completions.create({ model: 'words', messages, max_tokens: maxTokens });
  return chat.choices[0]!.message.content!;
}

describe('where the OpenAI frontend finds a chat template', () => {
  it.skipIf(ggufMissing)("reads a llama.cpp model's template and BOS token from its GGUF metadata", async () => {
    fx = await startOpenAIFixture(
      { words: { config: WORD_LLM_CONFIG } },
      { prepare: async (repository) => void execFileSync('python3', [MAKE_GGUF, join(repository.path, 'words', '1', 'model.gguf'), TEMPLATE]) },
    );
    expect(await promptWords([{ role: 'system', content: 'be brief' }, { role: 'user', content: 'hi' }], 6)).toBe(' <S>[SYSTEM] BE BRIEF [USER] HI [ASSISTANT]');
  });

  it('prefers the frontend chatTemplate, then the config parameter, then chat_template.jinja, then tokenizer_config.json', async () => {
    const prepare = async (repository: { path: string }) => {
      await writeFile(join(repository.path, 'words', 'chat_template.jinja'), 'FILE {{ messages[0].content }}');
      await writeFile(join(repository.path, 'words', 'tokenizer_config.json'), JSON.stringify({ chat_template: '{{ bos_token }} CONFIG', bos_token: { content: '<bos>' } }));
    };
    fx = await startOpenAIFixture({ words: { config: `${WORD_LLM_CONFIG}parameters { key: "chat_template" value { string_value: "PARAMETER {{ messages[0].content }}" } }\n` } }, { prepare });
    expect(await promptWords([{ role: 'user', content: 'x' }], 2)).toBe(' PARAMETER X');
    await fx.stop();
    fx = await startOpenAIFixture({ words: { config: WORD_LLM_CONFIG } }, { prepare, frontend: { chatTemplate: 'OPTION {{ messages[0].content }}' } });
    expect(await promptWords([{ role: 'user', content: 'x' }], 2)).toBe(' OPTION X');
    await fx.stop();
    fx = await startOpenAIFixture({ words: { config: WORD_LLM_CONFIG } }, { prepare });
    expect(await promptWords([{ role: 'user', content: 'x' }], 2)).toBe(' FILE X');
    await fx.stop();
    fx = await startOpenAIFixture({ words: { config: WORD_LLM_CONFIG } }, { prepare: async (repository) => writeFile(join(repository.path, 'words', 'tokenizer_config.json'), JSON.stringify({ chat_template: '{{ bos_token }} CONFIG', bos_token: { content: '<bos>' } })) });
    expect(await promptWords([{ role: 'user', content: 'x' }], 2)).toBe(' <BOS> CONFIG');
  });

  it('refuses a chat for a model without a template, saying where one may come from, and one the template itself refuses', async () => {
    fx = await startOpenAIFixture({ words: { config: WORD_LLM_CONFIG } }, { frontend: { chatTemplate: "{{ raise_exception('roles must alternate') }}" } });
    const refused = await promptWords([{ role: 'user', content: 'x' }], 2).catch((e: unknown) => e);
    expect(refused).toMatchObject({ status: 400 });
    expect((refused as Error).message).toMatch(/refused the messages: roles must alternate/);
    await fx.stop();
    fx = await startOpenAIFixture({ words: { config: WORD_LLM_CONFIG } });
    const missing = await promptWords([{ role: 'user', content: 'x' }], 2).catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 400 });
    expect((missing as Error).message).toMatch(/model 'words' has no chat template: give it a 'chat_template' parameter/);
  });
});
