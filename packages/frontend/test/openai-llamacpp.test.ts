import { join } from 'node:path';
import { gguf } from '@huggingface/gguf';
import { Template } from '@huggingface/jinja';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTinyLlamaModel, tinyGgufUnavailable } from '../../backend-llamacpp/models/tiny-llama.js';
import { startOpenAIFixture, type OpenAIFixture } from './helpers/openai-fixture.js';

const unavailable = await tinyGgufUnavailable();
if (unavailable) console.warn(`skipping the OpenAI frontend's llama.cpp tests: ${unavailable}`);

let fx: OpenAIFixture;
let client: OpenAI;
beforeAll(async () => {
  if (unavailable) return;
  fx = await startOpenAIFixture({}, { prepare: async (repository) => void (await makeTinyLlamaModel(repository.path, { name: 'tiny' })) });
  client = new OpenAI({ baseURL: fx.baseURL, apiKey: 'unused', maxRetries: 0 });
}, 120_000);
afterAll(() => fx?.stop());

const messages: OpenAI.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'You are brief.' },
  { role: 'user', content: 'Say something.' },
];

describe.skipIf(unavailable)('OpenAI frontend on a llama.cpp model (a tiny random GGUF)', () => {
  it("renders the chat with the GGUF's own template: the same continuation as the rendered prompt completed", async () => {
    const { metadata } = await gguf(join(fx.repository.path, 'tiny', '1', 'model.gguf'), { allowLocalFile: true });
    const template = (metadata as unknown as Record<string, unknown>)['tokenizer.chat_template'] as string;
    const prompt = new Template(template).render({ messages, add_generation_prompt: true, bos_token: '', eos_token: '' });
    const chat = await client.chat.completions.create({ model: 'tiny', messages, max_tokens: 8, temperature: 0 });
    const completion = await client.completions.create({ model: 'tiny', prompt, max_tokens: 8, temperature: 0 });
    expect(chat.choices[0]!.message.content).toBe(completion.choices[0]!.text);
    expect(chat.usage).toEqual(completion.usage);
    expect(chat.usage!.completion_tokens).toBeLessThanOrEqual(8);
    expect(chat.usage!.prompt_tokens).toBeGreaterThan(0);
  });

  it('streams the same text, greedy, as it answers whole, with usage and a finish reason', async () => {
    const whole = await client.chat.completions.create({ model: 'tiny', messages, max_tokens: 12, temperature: 0 });
    const stream = await client.chat.completions.create({ model: 'tiny', messages, max_tokens: 12, temperature: 0, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let finishReason: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    let contentChunks = 0;
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        if (choice.delta.content) contentChunks++;
        text += choice.delta.content ?? '';
        finishReason = choice.finish_reason ?? finishReason;
      }
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(whole.choices[0]!.message.content);
    expect(finishReason).toBe(whole.choices[0]!.finish_reason);
    expect(['stop', 'length']).toContain(finishReason);
    expect(usage).toEqual(whole.usage);
    expect(contentChunks).toBeGreaterThan(1);
  });
});
