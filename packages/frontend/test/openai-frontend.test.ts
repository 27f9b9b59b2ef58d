import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simpleModel } from './helpers/http-models.js';
import { startOpenAIFixture, wordModel, type OpenAIFixture } from './helpers/openai-fixture.js';
import { wordLlmTokens } from './helpers/word-llm-backend.js';

let fx: OpenAIFixture;
let client: OpenAI;
beforeAll(async () => {
  fx = await startOpenAIFixture({ words: wordModel, simple: simpleModel }, { frontend: { bodyLimitBytes: 1024 } });
  client = new OpenAI({ baseURL: fx.baseURL, apiKey: 'unused', maxRetries: 0 });
});
afterAll(() => fx.stop());

/** What the word model answers: the prompt's words, upper-cased, `count` tokens of them. */
const words = (prompt: string, count: number) => wordLlmTokens(prompt, count).join('');
const CHAT_PROMPT = 'user: hello there\nassistant:';

describe('OpenAI frontend with the openai npm client', () => {
  it('lists the ready models and retrieves one', async () => {
    const ids = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids.sort()).toEqual(['simple', 'words']);
    const model = await client.models.retrieve('words');
    expect(model).toMatchObject({ id: 'words', object: 'model', owned_by: 'Tritium' });
    expect(model.created).toBeGreaterThan(1_700_000_000);
  });

  it('completes a prompt, honouring max_tokens and reporting usage', async () => {
    const completion = await client.completions.create({ model: 'words', prompt: 'one two three', max_tokens: 5 });
    expect(completion.object).toBe('text_completion');
    expect(completion.choices).toEqual([{ index: 0, text: words('one two three', 5), logprobs: null, finish_reason: 'length' }]);
    expect(completion.usage).toEqual({ prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 });
  });

  it('uses the default max_tokens (16, as Triton) when none is given', async () => {
    const completion = await client.completions.create({ model: 'words', prompt: 'a b' });
    expect(completion.usage?.completion_tokens).toBe(16);
  });

  it('stops at a stop string, leaving it out, and echoes the prompt when asked', async () => {
    const stopped = await client.completions.create({ model: 'words', prompt: 'one two three', max_tokens: 10, stop: [' THREE'] });
    expect(stopped.choices[0]).toMatchObject({ text: ' ONE TWO', finish_reason: 'stop' });
    expect(stopped.usage?.completion_tokens).toBe(2);
    const echoed = await client.completions.create({ model: 'words', prompt: 'x y', max_tokens: 2, echo: true });
    expect(echoed.choices[0]!.text).toBe('x y X Y');
  });

  it('answers n choices, one generation each', async () => {
    const completion = await client.completions.create({ model: 'words', prompt: 'p q', max_tokens: 3, n: 3 });
    expect(completion.choices.map((choice) => [choice.index, choice.text])).toEqual([0, 1, 2].map((index) => [index, ' P Q P']));
    expect(completion.usage).toEqual({ prompt_tokens: 2, completion_tokens: 9, total_tokens: 11 });
  });

  it('gives logprobs where the model does, in both routes formats', async () => {
    const completion = await client.completions.create({ model: 'words', prompt: 'a b', max_tokens: 2, logprobs: 2 });
    expect(completion.choices[0]!.logprobs).toEqual({
      tokens: [' A', ' B'],
      token_logprobs: [-0.25, -0.25],
      top_logprobs: [
        { ' A': -0.25, ' ZZZ': -2 },
        { ' B': -0.25, ' ZZZ': -2 },
      ],
      text_offset: [0, 2],
    });
    const chat = await client.chat.completions.create({ model: 'words', messages: [{ role: 'user', content: 'hi' }], max_tokens: 1, logprobs: true, top_logprobs: 2 });
    expect(chat.choices[0]!.logprobs!.content).toEqual([
      {
        token: ' USER:',
        logprob: -0.25,
        bytes: [...Buffer.from(' USER:')],
        top_logprobs: [
          { token: ' USER:', logprob: -0.25, bytes: [...Buffer.from(' USER:')] },
          { token: ' ZZZ', logprob: -2, bytes: [...Buffer.from(' ZZZ')] },
        ],
      },
    ]);
  });

  it('streams a completion token by token, with a usage chunk when asked', async () => {
    const stream = await client.completions.create({ model: 'words', prompt: 'one two', max_tokens: 3, stream: true, stream_options: { include_usage: true } });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((chunk) => chunk.choices.map((choice) => [choice.text, choice.finish_reason]))).toEqual([
      [[' ONE', null]],
      [[' TWO', null]],
      [[' ONE', null]],
      [['', 'length']],
      [],
    ]);
    expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 2, completion_tokens: 3, total_tokens: 5 });
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
  });

  it('sends OpenAI server-sent events ending with [DONE]', async () => {
    const res = await fetch(`${fx.baseURL}/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'words', prompt: 'a', max_tokens: 2, stream: true }) });
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const events = (await res.text()).split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    expect(events.slice(0, -1).map((event) => JSON.parse(event.slice('data: '.length)).choices[0].text)).toEqual([' A', ' A', '']);
  });

  it('renders chat messages with the model chat template, whole and streamed', async () => {
    const messages = [{ role: 'user' as const, content: 'hello there' }];
    const chat = await client.chat.completions.create({ model: 'words', messages, max_completion_tokens: 4 });
    expect(chat.object).toBe('chat.completion');
    expect(chat.choices[0]).toMatchObject({ index: 0, message: { role: 'assistant', content: words(CHAT_PROMPT, 4) }, finish_reason: 'length' });
    expect(chat.usage).toEqual({ prompt_tokens: 4, completion_tokens: 4, total_tokens: 8 });

    const stream = await client.chat.completions.create({ model: 'words', messages, max_tokens: 4, stream: true });
    const deltas = [];
    for await (const chunk of stream) deltas.push(chunk.choices[0]!);
    expect(deltas[0]!.delta).toEqual({ role: 'assistant', content: '' });
    expect(deltas.slice(1, -1).map((choice) => choice.delta.content)).toEqual(wordLlmTokens(CHAT_PROMPT, 4));
    expect(deltas.at(-1)).toMatchObject({ delta: {}, finish_reason: 'length' });
  });

  it('cancels the generation when the client goes away mid-stream', async () => {
    const stream = await client.completions.create({ model: 'words', prompt: 'on and on', max_tokens: 100_000, stream: true });
    let received = 0;
    // Leaving the loop, the client aborts its request and its connection closes.
    for await (const _ of stream) if (++received === 3) break;
    await expect.poll(() => fx.words.cancelled).toBe(1);
  });

  it('streams n chat choices side by side, each opened, continued and finished', async () => {
    const stream = await client.chat.completions.create({ model: 'words', messages: [{ role: 'user', content: 'x' }], max_tokens: 2, n: 2, stream: true });
    const byChoice: Record<number, string[]> = { 0: [], 1: [] };
    const finished: Array<string | null> = [];
    for await (const chunk of stream) {
      for (const choice of chunk.choices) {
        byChoice[choice.index]!.push(choice.delta.content ?? '');
        if (choice.finish_reason) finished.push(choice.finish_reason);
      }
    }
    expect(byChoice[0]!.join('')).toBe(' USER: X');
    expect(byChoice[1]!.join('')).toBe(' USER: X');
    expect(finished).toEqual(['length', 'length']);
  });
});

describe('OpenAI frontend errors', () => {
  it('answers 404 model_not_found for a model it does not serve', async () => {
    const error = await client.completions.create({ model: 'nope', prompt: 'a' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    expect(error).toMatchObject({ status: 404, code: 'model_not_found', param: 'model', type: 'invalid_request_error' });
    await expect(client.models.retrieve('nope')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('refuses bad fields with 400, naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ temperature: 3 }, 'temperature', /'temperature' must be a number from 0 to 2/],
      [{ max_tokens: -1 }, 'max_tokens', /'max_tokens' must be a number from 0/],
      [{ stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop', /at most 4 strings/],
      [{ logit_bias: { 1: 2 } }, 'logit_bias', /logit_bias is not supported/],
      [{ suffix: 'x' }, 'suffix', /suffix is not supported/],
      [{ stream_options: { include_usage: true } }, 'stream_options', /only be used when `stream` is true/],
      [{ prompt: ['a', 'b'] }, 'prompt', /only a single string prompt/],
      [{ frobnicate: 1 }, 'frobnicate', /unrecognized request field 'frobnicate'/],
    ];
    for (const [fields, param, message] of cases) {
      const error = await client.completions.create({ model: 'words', prompt: 'a', ...fields } as never).catch((e: unknown) => e);
      expect(error, JSON.stringify(fields)).toBeInstanceOf(OpenAI.BadRequestError);
      expect((error as InstanceType<typeof OpenAI.BadRequestError>).param, JSON.stringify(fields)).toBe(param);
      expect((error as Error).message).toMatch(message);
    }
  });

  it('refuses chat requests it cannot serve: tools, images, a model that is no language model', async () => {
    const tools = await client.chat.completions
      .create({ model: 'words', messages: [{ role: 'user', content: 'a' }], tools: [{ type: 'function', function: { name: 'f' } }] })
      .catch((e: unknown) => e);
    expect(tools).toMatchObject({ status: 400, param: 'tools' });
    const image = await client.chat.completions
      .create({ model: 'words', messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'http://x/y.png' } }] }] })
      .catch((e: unknown) => e);
    expect(image).toMatchObject({ status: 400, param: 'messages[0].content[0]' });
    const notLlm = await client.chat.completions.create({ model: 'simple', messages: [{ role: 'user', content: 'a' }] }).catch((e: unknown) => e);
    expect(notLlm).toMatchObject({ status: 400, param: 'model' });
    expect((notLlm as Error).message).toMatch(/'simple' is not a text-generation model/);
    const notEmbedding = await client.embeddings.create({ model: 'words', input: 'a' }).catch((e: unknown) => e);
    expect((notEmbedding as Error).message).toMatch(/'words' is not an embedding model/);
  });

  it("answers a model's failure with its status before the stream has begun, and as an error event after", async () => {
    const early = await client.completions.create({ model: 'words', prompt: 'fail after 0', max_tokens: 5, stream: true }).catch((e: unknown) => e);
    expect(early).toBeInstanceOf(OpenAI.BadRequestError);
    expect((early as Error).message).toMatch(/asked to fail after 0 tokens/);
    const texts: string[] = [];
    const late = await (async () => {
      for await (const chunk of await client.completions.create({ model: 'words', prompt: 'fail after 2', max_tokens: 5, stream: true })) texts.push(chunk.choices[0]!.text);
    })().catch((e: unknown) => e);
    expect(texts).toEqual([' FAIL', ' AFTER']);
    expect(late).toBeInstanceOf(OpenAI.APIError);
    expect((late as Error).message).toMatch(/asked to fail after 2 tokens/);
  });

  it('ends a stream of n choices at the first that fails, cancelling the others', async () => {
    const cancelled = fx.words.cancelled;
    // seed 0: choice 0 fails after 2 tokens; choice 1 (seed 1) would go on.
    const stream = await client.completions.create({ model: 'words', prompt: 'fail after 2', max_tokens: 100_000, n: 2, seed: 0, stream: true });
    const late = await (async () => {
      for await (const _ of stream);
    })().catch((e: unknown) => e);
    expect((late as Error).message).toMatch(/asked to fail after 2 tokens/);
    await expect.poll(() => fx.words.cancelled).toBe(cancelled + 1);
    // The server still answers.
    expect((await client.completions.create({ model: 'words', prompt: 'a', max_tokens: 1 })).choices[0]!.text).toBe(' A');
  });

  it('answers OpenAI error objects for malformed bodies, unknown routes and wrong methods', async () => {
    const post = (path: string, body: string) => fetch(`${fx.baseURL}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const malformed = await post('/completions', '{"model": ');
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toEqual({ error: { message: expect.stringMatching(/not valid JSON/), type: 'invalid_request_error', param: null, code: 'invalid_json' } });
    expect((await post('/nothing', '{}')).status).toBe(404);
    const tooLarge = await post('/completions', JSON.stringify({ model: 'words', prompt: 'x'.repeat(2_000) }));
    expect(tooLarge.status).toBe(400);
    expect(((await tooLarge.json()) as { error: { message: string } }).error.message).toMatch(/exceeds the maximum allowed input size of 1024 bytes/);
    expect((await fetch(`${fx.baseURL}/completions`)).status).toBe(405);
  });
});
