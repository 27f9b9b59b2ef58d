import { InferenceError, type Backend, type Tensor } from '@tritium/core';
import type { BackendRequest } from '@tritium/core/backend';
import { executeBackend } from './execute-backend.js';

/**
 * A decoupled language model for tests, on Triton's LLM-backend tensors (those of Triton's
 * vLLM backend): its tokens are words, and it "generates" the prompt's words upper-cased,
 * over and over, one token per response when streaming. It honours max_tokens and stop
 * (finish_reason "length" or "stop"), echo (exclude_input_in_output false), the token
 * counts and logprobs (each token certain-ish: -0.25, with one runner-up at -2). A prompt
 * saying `fail after <n>` streams n tokens, then fails (with a `seed`, only at seed 0: of
 * n choices, which differ by seed, only the first fails).
 */
export function wordLlmBackend(probe: WordLlmProbe = { cancelled: 0 }): Backend {
  return executeBackend('word_llm', async (requests) => {
    for (const request of requests) void generate(request, probe);
  });
}

/** What a test can see of the backend: how many generations stopped because their request was cancelled. */
export interface WordLlmProbe {
  cancelled: number;
}

/** The config of a model served by wordLlmBackend, as Triton's vLLM backend's auto-complete writes it. */
export const WORD_LLM_CONFIG = `backend: "word_llm"
max_batch_size: 0
model_transaction_policy { decoupled: true }
input { name: "text_input" data_type: TYPE_STRING dims: [ 1 ] }
input { name: "stream" data_type: TYPE_BOOL dims: [ 1 ] optional: true }
input { name: "sampling_parameters" data_type: TYPE_STRING dims: [ 1 ] optional: true }
input { name: "exclude_input_in_output" data_type: TYPE_BOOL dims: [ 1 ] optional: true }
input { name: "return_finish_reason" data_type: TYPE_BOOL dims: [ 1 ] optional: true }
input { name: "return_logprobs" data_type: TYPE_BOOL dims: [ 1 ] optional: true }
input { name: "return_num_input_tokens" data_type: TYPE_BOOL dims: [ 1 ] optional: true }
input { name: "return_num_output_tokens" data_type: TYPE_BOOL dims: [ 1 ] optional: true }
output { name: "text_output" data_type: TYPE_STRING dims: [ -1 ] }
output { name: "finish_reason" data_type: TYPE_STRING dims: [ -1 ] }
output { name: "logprobs" data_type: TYPE_STRING dims: [ -1 ] }
output { name: "num_input_tokens" data_type: TYPE_UINT32 dims: [ 1 ] }
output { name: "num_output_tokens" data_type: TYPE_UINT32 dims: [ -1 ] }
`;

const decoder = new TextDecoder();

function text(tensor: Tensor | undefined): string | undefined {
  const element = tensor?.data[0];
  return element === undefined ? undefined : typeof element === 'string' ? element : decoder.decode(element as Uint8Array);
}

function flag(request: BackendRequest, name: string, otherwise: boolean): boolean {
  const tensor = request.inputs[name];
  return tensor === undefined ? otherwise : tensor.data[0] === 1;
}

/** Every word of the prompt, upper-cased, repeated: the model's whole possible answer, one token per word. */
export function wordLlmTokens(prompt: string, count: number): string[] {
  const words = prompt.split(/\s+/).filter(Boolean).map((word) => word.toUpperCase());
  return Array.from({ length: count }, (_, i) => ` ${words[i % words.length]}`);
}

async function generate(request: BackendRequest, probe: WordLlmProbe): Promise<void> {
  const prompt = text(request.inputs.text_input) ?? '';
  const sampling = JSON.parse(text(request.inputs.sampling_parameters) ?? '{}') as { max_tokens?: number; stop?: string[]; logprobs?: number; seed?: number };
  const stream = flag(request, 'stream', false);
  const echo = !flag(request, 'exclude_input_in_output', true);
  const { tokens, finishReason } = continuation(prompt, sampling.max_tokens ?? 16, sampling.stop ?? []);
  const extra = (sent: string[], final: boolean): Record<string, Tensor> => {
    const outputs: Record<string, Tensor> = {};
    if (flag(request, 'return_num_input_tokens', false)) outputs.num_input_tokens = { datatype: 'UINT32', shape: [1], data: new Uint32Array([wordCount(prompt)]) };
    if (flag(request, 'return_num_output_tokens', false)) outputs.num_output_tokens = { datatype: 'UINT32', shape: [1], data: new Uint32Array([sent.length]) };
    // As vLLM: with every response, Python's None until the last.
    if (flag(request, 'return_finish_reason', false)) outputs.finish_reason = { datatype: 'BYTES', shape: [1], data: [final ? finishReason : 'None'] };
    if (flag(request, 'return_logprobs', false)) {
      const candidates = sent.map((token, i) => ({ [i]: { logprob: -0.25, rank: 1, decoded_token: token }, 999: { logprob: -2, rank: 2, decoded_token: ' ZZZ' } }));
      outputs.logprobs = { datatype: 'BYTES', shape: [1], data: [JSON.stringify(candidates)] };
    }
    return outputs;
  };
  const textTensor = (value: string): Tensor => ({ datatype: 'BYTES', shape: [1], data: [value] });
  if (!stream) {
    request.response.send({ text_output: textTensor((echo ? prompt : '') + tokens.join('')), ...extra(tokens, true) }, { final: true });
    return;
  }
  if (echo) request.response.send({ text_output: textTensor(prompt), ...extra([], tokens.length === 0) }, { final: tokens.length === 0 });
  const failAfter = (sampling.seed ?? 0) === 0 ? /fail after (\d+)/.exec(prompt) : null;
  for (const [i, token] of tokens.entries()) {
    if (failAfter && i === Number(failAfter[1])) return request.response.fail(new InferenceError('INVALID_ARG', `the word model was asked to fail after ${i} tokens`));
    // A token at a time, as a model decodes: the next one comes on a later turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    if (request.isCancelled) {
      probe.cancelled++;
      return request.response.close();
    }
    const final = i === tokens.length - 1;
    request.response.send({ text_output: textTensor(token), ...extra([token], final) }, { final });
  }
  if (tokens.length === 0 && !echo) request.response.close();
}

/** The tokens up to max_tokens, cut before the first stop string (which is not sent, as vLLM leaves it out). */
function continuation(prompt: string, maxTokens: number, stops: readonly string[]): { tokens: string[]; finishReason: string } {
  const tokens = wordLlmTokens(prompt, maxTokens);
  let generated = '';
  for (const [i, token] of tokens.entries()) {
    const next = generated + token;
    if (stops.some((stop) => next.includes(stop))) return { tokens: tokens.slice(0, i), finishReason: 'stop' };
    generated = next;
  }
  return { tokens, finishReason: 'length' };
}

function wordCount(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}
