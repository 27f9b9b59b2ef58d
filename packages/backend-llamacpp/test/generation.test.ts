import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InferenceServer, type InferResponse } from '@tritium/core';
import { llamacppBackend } from '@tritium/backend-llamacpp';
import { getLlama, type LlamaModel, type Llama } from 'node-llama-cpp';
import { makeTinyLlamaModel, tinyGgufUnavailable } from '../models/tiny-llama.js';

const missing = await tinyGgufUnavailable();
if (missing) console.log(`skipping the llamacpp generation tests: ${missing}`);

interface Generated {
  readonly responses: InferResponse[];
  /** text_output of every response, joined. */
  readonly text: string;
  readonly finishReason: string;
  readonly outputTokens: number;
  readonly inputTokens: number;
}

const text = (response: InferResponse) => String(response.outputs.text_output!.data[0]);

describe.skipIf(missing !== undefined)('llamacpp backend on a tiny random Llama', () => {
  let repo: string;
  let server: InferenceServer;
  let llama: Llama;
  let direct: LlamaModel;

  beforeAll(async () => {
    repo = await mkdtemp(join(tmpdir(), 'tritium-llamacpp-'));
    await makeTinyLlamaModel(repo);
    await makeTinyLlamaModel(repo, { name: 'one_sequence', engine: { parallel: 1 } });
    const twoInstances = await makeTinyLlamaModel(repo, { name: 'two_instances', engine: { parallel: 1 } });
    await writeFile(join(twoInstances, 'config.pbtxt'), 'backend: "llamacpp"\ninstance_group { count: 2 kind: KIND_CPU }\n');
    const broken = await makeTinyLlamaModel(repo, { name: 'missing_gguf' });
    await writeFile(join(broken, '1', 'model.json'), JSON.stringify({ model: 'absent.gguf' }));
    // No backends given: core's registry loads @tritium/backend-llamacpp by name.
    server = await InferenceServer.start({ modelRepository: repo, continueOnLoadError: true });
    llama = await getLlama({ gpu: false, build: 'never', skipDownload: true });
    direct = await llama.loadModel({ modelPath: join(repo, 'tiny_llama', '1', 'model.gguf'), vocabOnly: true });
  });

  afterAll(async () => {
    await server?.stop();
    await llama?.dispose();
    if (repo) await rm(repo, { recursive: true, force: true });
  });

  function request(prompt: string, sampling: Record<string, unknown> | undefined, options: { stream?: boolean; excludeInput?: boolean } = {}) {
    return {
      inputs: {
        text_input: { datatype: 'BYTES' as const, shape: [1], data: [prompt] },
        ...(options.stream !== undefined && { stream: { datatype: 'BOOL' as const, shape: [1], data: [options.stream] } }),
        ...(options.excludeInput !== undefined && { exclude_input_in_output: { datatype: 'BOOL' as const, shape: [1], data: [options.excludeInput] } }),
        ...(sampling && { sampling_parameters: { datatype: 'BYTES' as const, shape: [1], data: [JSON.stringify(sampling)] } }),
      },
    };
  }

  async function generate(
    prompt: string,
    sampling: Record<string, unknown> | undefined,
    options: { stream?: boolean; excludeInput?: boolean; model?: string; signal?: AbortSignal; onResponse?: (r: InferResponse) => void } = {},
  ): Promise<Generated> {
    const responses: InferResponse[] = [];
    for await (const response of server.inferStream(options.model ?? 'tiny_llama', { ...request(prompt, sampling, options), signal: options.signal })) {
      responses.push(response);
      options.onResponse?.(response);
    }
    const last = responses.at(-1)!;
    return {
      responses,
      text: responses.map(text).join(''),
      finishReason: String(last.outputs.finish_reason!.data[0]),
      outputTokens: responses.reduce((sum, r) => sum + (r.outputs.num_output_tokens!.data as Uint32Array)[0]!, 0),
      inputTokens: (last.outputs.num_input_tokens!.data as Uint32Array)[0]!,
    };
  }

  const greedy = (maxTokens: number, more: Record<string, unknown> = {}) => ({ temperature: 0, max_tokens: maxTokens, ...more });

  it('auto-completes a config that names only the backend, as Triton vLLM backend does', async () => {
    const config = await server.modelConfig('tiny_llama');
    expect(config.model_transaction_policy?.decoupled).toBe(true);
    expect(config.max_batch_size).toBe(0);
    expect(config.input?.map((input) => input.name)).toEqual(
      expect.arrayContaining(['text_input', 'stream', 'sampling_parameters', 'exclude_input_in_output', 'return_num_input_tokens', 'return_num_output_tokens']),
    );
    expect(config.output?.map((output) => [output.name, output.data_type])).toEqual([
      ['text_output', 'TYPE_STRING'],
      ['finish_reason', 'TYPE_STRING'],
      ['cumulative_logprob', 'TYPE_FP32'],
      ['logprobs', 'TYPE_STRING'],
      ['num_input_tokens', 'TYPE_UINT32'],
      ['num_output_tokens', 'TYPE_UINT32'],
    ]);
  });

  it('is deterministic under greedy sampling, and under a fixed seed', async () => {
    const first = await generate('Once upon a time', greedy(20));
    const second = await generate('Once upon a time', greedy(20));
    expect(second.text).toBe(first.text);
    expect(first.text.startsWith('Once upon a time')).toBe(true);
    expect(first.text.length).toBeGreaterThan('Once upon a time'.length);

    const seeded = { temperature: 0.9, top_p: 0.95, top_k: 40, seed: 1234, max_tokens: 20 };
    const a = await generate('Once upon a time', seeded);
    const b = await generate('Once upon a time', seeded);
    expect(b.text).toBe(a.text);
    // Without a seed, each request samples with its own.
    const { seed: _, ...unseeded } = seeded;
    const c = await generate('Once upon a time', unseeded);
    const d = await generate('Once upon a time', unseeded);
    expect(c.text).not.toBe(d.text);
  });

  it('counts the prompt tokens as the model tokenizes them and the output tokens up to max_tokens', async () => {
    const prompt = 'the world is good';
    const expectedInput = 1 + direct.tokenize(prompt, true).length; // BOS first
    for (const maxTokens of [1, 5, 12]) {
      const result = await generate(prompt, greedy(maxTokens));
      expect(result.inputTokens).toBe(expectedInput);
      expect(result.outputTokens).toBe(maxTokens);
      expect(result.finishReason).toBe('length');
    }
    const short = await generate(prompt, greedy(5), { excludeInput: true });
    const long = await generate(prompt, greedy(12), { excludeInput: true });
    expect(long.text.startsWith(short.text)).toBe(true);
    expect(long.text.length).toBeGreaterThan(short.text.length);
  });

  it('streams the same text in order, one response per token, only the last one final', async () => {
    const whole = await generate('A long story', greedy(16), { excludeInput: true });
    const streamed = await generate('A long story', greedy(16), { stream: true });
    expect(streamed.text).toBe(whole.text);
    expect(streamed.responses.length).toBeGreaterThan(8);
    expect(streamed.responses.map((r) => r.final ?? false)).toEqual([...streamed.responses.slice(1).map(() => false), true]);
    expect(streamed.responses.slice(0, -1).every((r) => r.outputs.finish_reason!.data[0] === 'None')).toBe(true);
    expect(streamed.finishReason).toBe('length');
    // Per response, num_output_tokens counts the tokens since the previous one.
    expect(streamed.outputTokens).toBe(16);
  });

  it('ends at the first stop string, leaving it out unless include_stop_str_in_output', async () => {
    const full = await generate('In the morning', greedy(24), { excludeInput: true });
    const stop = full.text.slice(full.text.length >> 1, (full.text.length >> 1) + 3);
    const expected = full.text.slice(0, full.text.indexOf(stop));
    const stopped = await generate('In the morning', greedy(24, { stop: [stop, 'no such text'] }), { excludeInput: true });
    expect(stopped.text).toBe(expected);
    expect(stopped.finishReason).toBe('stop');
    expect(stopped.outputTokens).toBeLessThan(24);
    const kept = await generate('In the morning', greedy(24, { stop, include_stop_str_in_output: true }), { excludeInput: true });
    expect(kept.text).toBe(expected + stop);
    // Streamed, no part of the stop string leaks out before it is recognised.
    const streamed = await generate('In the morning', greedy(24, { stop }), { stream: true });
    expect(streamed.text).toBe(expected);
  });

  it('ends at a stop token id, counting it but not writing it', async () => {
    const full = await generate('In the morning', greedy(10, { logprobs: 0 }), { excludeInput: true });
    const ids = (JSON.parse(String(full.responses[0]!.outputs.logprobs!.data[0])) as Array<Record<string, { rank: number; decoded_token: string }>>).map(
      (position) => Object.entries(position).find(([, entry]) => entry.rank === 1)!,
    );
    const [stopId] = ids[4]!;
    const at = ids.findIndex(([id]) => id === stopId);
    const stopped = await generate('In the morning', greedy(10, { stop_token_ids: [Number(stopId)] }), { excludeInput: true });
    expect(stopped.finishReason).toBe('stop');
    expect(stopped.outputTokens).toBe(at + 1);
    expect(stopped.text).toBe(ids.slice(0, at).map(([, entry]) => entry.decoded_token).join(''));
  });

  it('applies the repetition penalties to the generated tokens', async () => {
    const sampledIds = (result: Generated) =>
      (JSON.parse(String(result.responses[0]!.outputs.logprobs!.data[0])) as Array<Record<string, { rank: number }>>).map((position) =>
        Object.keys(position).find((id) => position[id]!.rank === 1 || Object.keys(position).length === 1),
      );
    const plain = sampledIds(await generate('the sea', greedy(48, { logprobs: 0 }), { excludeInput: true }));
    const penalized = sampledIds(await generate('the sea', greedy(48, { logprobs: 0, presence_penalty: 2, frequency_penalty: 2 }), { excludeInput: true }));
    // This random model soon loops under greedy decoding; penalized, it repeats itself less.
    expect(new Set(plain).size).toBeLessThan(plain.length);
    expect(new Set(penalized).size).toBeGreaterThan(new Set(plain).size);
  });

  it('refuses a prompt the context cannot hold', async () => {
    await expect(generate(' a'.repeat(600), greedy(4))).rejects.toMatchObject({ code: 'INVALID_ARG', message: expect.stringMatching(/the prompt has \d+ tokens; a sequence of this model holds 512/) });
  });

  it('prepends the prompt unless excluded, and refuses to stream with it', async () => {
    const withPrompt = await generate('Hello there', greedy(4));
    const without = await generate('Hello there', greedy(4), { excludeInput: true });
    expect(withPrompt.text).toBe('Hello there' + without.text);
    await expect(generate('Hello there', greedy(4), { stream: true, excludeInput: false })).rejects.toThrow(/exclude_input_in_output/);
  });

  it('takes the sampling parameters from the request parameters when the tensor is absent', async () => {
    const responses: InferResponse[] = [];
    for await (const r of server.inferStream('tiny_llama', { ...request('Hello', undefined), parameters: { temperature: 0, max_tokens: 3 } })) responses.push(r);
    expect((responses[0]!.outputs.num_output_tokens!.data as Uint32Array)[0]).toBe(3);
  });

  it('gives 8 concurrent streams each the continuation it gets alone, sharing decode steps', async () => {
    const prompts = ['one', 'two birds', 'the sea', 'a house', 'my father', 'every day', 'look here', 'the end of the line'];
    const alone: string[] = [];
    for (const prompt of prompts) alone.push((await generate(prompt, greedy(24), { stream: true })).text);
    const order: number[] = [];
    const together = await Promise.all(prompts.map((prompt, i) => generate(prompt, greedy(24), { stream: true, onResponse: () => order.push(i) })));
    expect(together.map((r) => r.text)).toEqual(alone);
    // Continuous batching: every stream has responded before any one finished.
    const lastToStart = Math.max(...prompts.map((_, i) => order.indexOf(i)));
    const firstToFinish = Math.min(...prompts.map((_, i) => order.lastIndexOf(i)));
    expect(lastToStart).toBeLessThan(firstToFinish);
  });

  it('frees a cancelled request sequence at the next token, for the request waiting on it', async () => {
    const controller = new AbortController();
    let received = 0;
    const cancelled = generate('Once', { temperature: 0, max_tokens: null }, {
      model: 'one_sequence',
      stream: true,
      signal: controller.signal,
      onResponse: () => {
        if (++received === 3) controller.abort();
      },
    });
    // Queued behind the cancelled one: the model has a single sequence.
    const waiting = generate('Twice', greedy(4), { model: 'one_sequence' });
    await expect(cancelled).rejects.toMatchObject({ code: 'CANCELLED' });
    const next = await waiting;
    expect(next.outputTokens).toBe(4);
    expect(received).toBeLessThan(10);
  });

  it('gives a request to an instance with a free sequence, not one whose sequences are all busy', async () => {
    const ended: string[] = [];
    let firstResponse!: () => void;
    const generating = new Promise<void>((resolve) => (firstResponse = resolve));
    const long = generate('Once', greedy(200, { ignore_eos: true }), { model: 'two_instances', stream: true, onResponse: () => firstResponse() }).then(() => ended.push('long'));
    await generating;
    // Each instance has one sequence: this one must not wait for the long one's.
    await generate('Twice', greedy(4), { model: 'two_instances' }).then(() => ended.push('short'));
    await long;
    expect(ended).toEqual(['short', 'long']);
  });

  it('gives the log probabilities of each streamed token and their sum, as vLLM shapes them', async () => {
    const streamed = await generate('the sea', greedy(6, { logprobs: 2 }), { stream: true });
    const positions = streamed.responses.flatMap((r) => {
      const list = JSON.parse(String(r.outputs.logprobs!.data[0])) as Array<Record<string, { logprob: number; rank: number; decoded_token: string }>>;
      expect(list).toHaveLength((r.outputs.num_output_tokens!.data as Uint32Array)[0]!);
      return list;
    });
    expect(positions).toHaveLength(6);
    let sum = 0;
    for (const position of positions) {
      const entries = Object.values(position);
      expect(entries.map((e) => e.rank).sort()).toEqual([1, 2]);
      expect(entries.every((e) => e.logprob <= 0)).toBe(true);
      // Greedy: the sampled token is the most likely one.
      sum += entries.find((e) => e.rank === 1)!.logprob;
    }
    expect(positions.map((p) => Object.values(p).find((e) => e.rank === 1)!.decoded_token).join('')).toBe(streamed.text);
    const cumulative = (streamed.responses.at(-1)!.outputs.cumulative_logprob!.data as Float32Array)[0]!;
    expect(cumulative).toBeCloseTo(sum, 3);
    // Not asked for: "null", as vLLM's.
    const plain = await generate('the sea', greedy(2));
    expect(plain.responses[0]!.outputs.logprobs!.data[0]).toBe('null');
  });

  it('refuses bad sampling parameters naming the field', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ temperature: -1 }, /'temperature'/],
      [{ temperature: 'hot' }, /'temperature'/],
      [{ top_p: 0 }, /'top_p'/],
      [{ top_p: 1.5 }, /'top_p'/],
      [{ top_k: -2 }, /'top_k'/],
      [{ max_tokens: 0 }, /'max_tokens'/],
      [{ max_tokens: 2.5 }, /'max_tokens'/],
      [{ stop: 5 }, /'stop'/],
      [{ seed: 'x' }, /'seed'/],
      [{ repetition_penalty: 0 }, /'repetition_penalty'/],
      [{ frequency_penalty: 3 }, /'frequency_penalty'/],
      [{ presence_penalty: -2.5 }, /'presence_penalty'/],
      [{ n: 2 }, /'n'/],
      [{ logprobs: 21 }, /'logprobs'/],
      [{ best_of: 2 }, /'best_of' is not supported/],
    ];
    for (const [sampling, message] of cases) {
      await expect(generate('Hello', sampling), JSON.stringify(sampling)).rejects.toMatchObject({ code: 'INVALID_ARG', message: expect.stringMatching(message) });
    }
    const notJson = server.inferStream('tiny_llama', { inputs: { ...request('Hello', undefined).inputs, sampling_parameters: { datatype: 'BYTES', shape: [1], data: ['{temperature'] } } });
    await expect(notJson.next()).rejects.toThrow(/'sampling_parameters' is not JSON/);
  });

  it('accepts vLLM parameters given as strings, as Triton request parameters carry them', async () => {
    const result = await generate('Hello', { temperature: '0', max_tokens: '2', ignore_eos: 'true' });
    expect(result.outputTokens).toBe(2);
  });

  it('makes a model whose GGUF file is missing UNAVAILABLE, saying which file', async () => {
    const entry = (await server.repositoryIndex()).find((model) => model.name === 'missing_gguf');
    expect(entry).toMatchObject({ state: 'UNAVAILABLE', reason: expect.stringContaining("the GGUF file '") });
    expect(entry!.reason).toContain('absent.gguf');
    expect(entry!.reason).toContain('does not exist');
  });

  it('exports prompt and generation token counters and the latency histograms', async () => {
    await generate('Hello', greedy(3));
    const metrics = await server.metrics();
    expect(metrics).toMatch(/llamacpp:generation_tokens_total\{model="tiny_llama",version="1"\} [1-9]/);
    expect(metrics).toMatch(/llamacpp:prompt_tokens_total\{model="tiny_llama",version="1"\} [1-9]/);
    expect(metrics).toMatch(/llamacpp:time_to_first_token_seconds_count\{model="tiny_llama",version="1"\} [1-9]/);
    expect(metrics).toMatch(/llamacpp:time_per_output_token_seconds_bucket\{le="\+Inf",model="tiny_llama",version="1"\} [1-9]/);
  });
});

describe.skipIf(missing !== undefined)('llamacpp models without a config.pbtxt', () => {
  it('are recognised by their model.json when the backend is given, and auto-completed', async () => {
    const repo = await mkdtemp(join(tmpdir(), 'tritium-llamacpp-noconfig-'));
    try {
      await makeTinyLlamaModel(repo, { name: 'bare', config: false, engine: { parallel: 1 } });
      const server = await InferenceServer.start({ modelRepository: repo, backends: [llamacppBackend()] });
      try {
        expect(await server.repositoryIndex()).toMatchObject([{ name: 'bare', state: 'READY' }]);
        expect(await server.modelConfig('bare')).toMatchObject({ backend: 'llamacpp', model_transaction_policy: { decoupled: true } });
      } finally {
        await server.stop();
      }
    } finally {
      await rm(repo, { recursive: true, force: true });
    }
  });
});
