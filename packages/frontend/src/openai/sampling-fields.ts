import { invalidField, unsupportedField } from './openai-error.js';
import type { RequestFields } from './request-fields.js';

/** What a completion or chat request asks of generation, besides its prompt. */
export interface SamplingRequest {
  /** vLLM's sampling parameters, by vLLM's names, without `logprobs` (each route maps its own). */
  readonly samplingParameters: Record<string, unknown>;
  /** Choices asked for: one generation each. */
  readonly n: number;
  readonly stream: boolean;
  /** stream_options.include_usage: a last chunk with the usage. */
  readonly includeUsage: boolean;
}

/** The fields Triton's frontend drops before it maps a request to vLLM: read, and ignored. */
const IGNORED = ['user', 'store', 'metadata', 'service_tier'];

/** The fields Tritium refuses (400, naming the field), as Triton's frontend refuses them. */
const REFUSED: Readonly<Record<string, string>> = {
  logit_bias: 'logit_bias is not supported',
  best_of: 'best_of is not supported (vLLM removed it)',
  suffix: 'suffix is not supported',
  tools: 'tool calls are not supported: Tritium has no tool-call parser',
  tool_choice: 'tool calls are not supported: Tritium has no tool-call parser',
  parallel_tool_calls: 'tool calls are not supported: Tritium has no tool-call parser',
  functions: 'function calls are not supported',
  function_call: 'function calls are not supported',
  response_format: 'response_format is not supported',
};

/**
 * The sampling fields both routes share, mapped to vLLM's sampling parameters under the
 * same names (top_k and repetition_penalty too, as vLLM's own server takes them), with
 * OpenAI's ranges. `maxTokens`: the route's own max_tokens (or max_completion_tokens).
 */
export function samplingRequest(fields: RequestFields, maxTokens: number): SamplingRequest {
  for (const name of IGNORED) fields.raw(name);
  for (const [name, why] of Object.entries(REFUSED)) if (fields.raw(name) !== undefined) throw unsupportedField(name, why);
  const samplingParameters: Record<string, unknown> = {
    temperature: fields.number('temperature', 0, 2),
    top_p: fields.number('top_p', 0, 1),
    top_k: fields.integer('top_k', -1, Number.MAX_SAFE_INTEGER),
    frequency_penalty: fields.number('frequency_penalty', -2, 2),
    presence_penalty: fields.number('presence_penalty', -2, 2),
    repetition_penalty: fields.number('repetition_penalty', Number.MIN_VALUE, Number.MAX_VALUE),
    seed: fields.integer('seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER),
    stop: fields.strings('stop', 4),
    min_tokens: fields.integer('min_tokens', 0, Number.MAX_SAFE_INTEGER),
    ignore_eos: fields.boolean('ignore_eos'),
    max_tokens: maxTokens,
  };
  for (const [key, value] of Object.entries(samplingParameters)) if (value === undefined) delete samplingParameters[key];
  const stream = fields.boolean('stream') ?? false;
  return { samplingParameters, n: fields.integer('n', 1, 128) ?? 1, stream, includeUsage: streamOptions(fields, stream) };
}

/** stream_options, which only a stream may have: whether it asks for a usage chunk. */
function streamOptions(fields: RequestFields, stream: boolean): boolean {
  const options = fields.raw('stream_options');
  if (options === undefined) return false;
  if (!stream) throw invalidField('stream_options', '`stream_options` can only be used when `stream` is true');
  if (typeof options !== 'object' || Array.isArray(options)) throw invalidField('stream_options', "'stream_options' must be an object");
  const includeUsage = (options as Record<string, unknown>).include_usage ?? false;
  if (typeof includeUsage !== 'boolean') throw invalidField('stream_options.include_usage', "'stream_options.include_usage' must be a boolean");
  return includeUsage;
}

/** The sampling parameters of choice `index` of n: with a seed, each choice its own (seed + index), so that they differ as OpenAI's do. */
export function choiceSampling(samplingParameters: Readonly<Record<string, unknown>>, index: number): Record<string, unknown> {
  const { seed } = samplingParameters;
  return typeof seed === 'number' && index > 0 ? { ...samplingParameters, seed: seed + index } : { ...samplingParameters };
}
