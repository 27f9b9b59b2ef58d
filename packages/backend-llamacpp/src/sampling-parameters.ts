import { InferenceError } from '@tritium/core/backend';

/** vLLM's sampling parameters that llama.cpp can honour, checked, with vLLM's defaults. */
export interface SamplingParameters {
  /** 0: greedy. */
  readonly temperature: number;
  readonly topP: number;
  /** 0: every token. */
  readonly topK: number;
  readonly minP: number;
  /** undefined: until the sequence's context is full. */
  readonly maxTokens: number | undefined;
  readonly minTokens: number;
  readonly stop: readonly string[];
  readonly stopTokenIds: readonly number[];
  readonly includeStopStrInOutput: boolean;
  readonly ignoreEos: boolean;
  /** undefined: a fresh seed per request. */
  readonly seed: number | undefined;
  readonly repetitionPenalty: number;
  readonly frequencyPenalty: number;
  readonly presencePenalty: number;
  readonly skipSpecialTokens: boolean;
  /** How many top log probabilities per generated token (the `logprobs` output); undefined: none. */
  readonly logprobs: number | undefined;
}

export const DEFAULT_SAMPLING: SamplingParameters = {
  temperature: 1,
  topP: 1,
  topK: 0,
  minP: 0,
  maxTokens: 16,
  minTokens: 0,
  stop: [],
  stopTokenIds: [],
  includeStopStrInOutput: false,
  ignoreEos: false,
  seed: undefined,
  repetitionPenalty: 1,
  frequencyPenalty: 0,
  presencePenalty: 0,
  skipSpecialTokens: true,
  logprobs: undefined,
};

/** vLLM's default max_logprobs. */
const MAX_LOGPROBS = 20;

type Reader = (value: unknown, field: string) => Partial<SamplingParameters>;

// Numbers and booleans may come as strings: Triton's request parameters often carry them so, and vLLM converts them.
function number(value: unknown, field: string, what: string, accept: (n: number) => boolean): number {
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isFinite(n) || !accept(n)) {
    throw new InferenceError('INVALID_ARG', `sampling parameter '${field}' must be ${what}, not ${JSON.stringify(value)}`);
  }
  return n;
}

const integer = (value: unknown, field: string, min: number) => number(value, field, `an integer >= ${min}`, (n) => Number.isSafeInteger(n) && n >= min);
const range = (value: unknown, field: string, min: number, max: number, minOpen = false) =>
  number(value, field, `a number in ${minOpen ? '(' : '['}${min}, ${max}]`, (n) => (minOpen ? n > min : n >= min) && n <= max);

function boolean(value: unknown, field: string): boolean {
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new InferenceError('INVALID_ARG', `sampling parameter '${field}' must be true or false, not ${JSON.stringify(value)}`);
}

function strings(value: unknown, field: string): string[] {
  const list = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(list) || !list.every((s) => typeof s === 'string' && s !== '')) {
    throw new InferenceError('INVALID_ARG', `sampling parameter '${field}' must be a non-empty string or a list of them, not ${JSON.stringify(value)}`);
  }
  return list;
}

const READERS: Readonly<Record<string, Reader>> = {
  temperature: (v, f) => ({ temperature: number(v, f, 'a number >= 0', (n) => n >= 0) }),
  top_p: (v, f) => ({ topP: range(v, f, 0, 1, true) }),
  // vLLM's -1 (and 0) mean every token.
  top_k: (v, f) => ({ topK: Math.max(0, number(v, f, 'an integer >= -1', (n) => Number.isSafeInteger(n) && n >= -1)) }),
  min_p: (v, f) => ({ minP: range(v, f, 0, 1) }),
  max_tokens: (v, f) => ({ maxTokens: v === null ? undefined : integer(v, f, 1) }),
  min_tokens: (v, f) => ({ minTokens: integer(v, f, 0) }),
  stop: (v, f) => ({ stop: v === null ? [] : strings(v, f) }),
  stop_token_ids: (v, f) => {
    if (!Array.isArray(v)) throw new InferenceError('INVALID_ARG', `sampling parameter '${f}' must be a list of token ids, not ${JSON.stringify(v)}`);
    return { stopTokenIds: v.map((id) => integer(id, f, 0)) };
  },
  include_stop_str_in_output: (v, f) => ({ includeStopStrInOutput: boolean(v, f) }),
  ignore_eos: (v, f) => ({ ignoreEos: boolean(v, f) }),
  skip_special_tokens: (v, f) => ({ skipSpecialTokens: boolean(v, f) }),
  seed: (v, f) => ({ seed: v === null ? undefined : integer(v, f, 0) }),
  repetition_penalty: (v, f) => ({ repetitionPenalty: number(v, f, 'a number > 0', (n) => n > 0) }),
  frequency_penalty: (v, f) => ({ frequencyPenalty: range(v, f, -2, 2) }),
  presence_penalty: (v, f) => ({ presencePenalty: range(v, f, -2, 2) }),
  logprobs: (v, f) => ({ logprobs: v === null ? undefined : number(v, f, `an integer in [0, ${MAX_LOGPROBS}]`, (n) => Number.isSafeInteger(n) && n >= 0 && n <= MAX_LOGPROBS) }),
  // One completion per request, as Triton's vLLM backend returns.
  n: (v, f) => (number(v, f, '1 (one completion per request)', (n) => n === 1), {}),
};

/**
 * Checks a request's sampling parameters (the `sampling_parameters` JSON or the request's
 * parameters) against vLLM's names and ranges. A field this engine cannot honour is
 * refused by name rather than ignored.
 */
export function parseSamplingParameters(fields: Readonly<Record<string, unknown>>): SamplingParameters {
  let parsed: SamplingParameters = DEFAULT_SAMPLING;
  for (const [field, value] of Object.entries(fields)) {
    const read = READERS[field];
    if (!read) {
      throw new InferenceError('INVALID_ARG', `sampling parameter '${field}' is not supported by the llamacpp backend (supported: ${Object.keys(READERS).join(', ')})`);
    }
    parsed = { ...parsed, ...read(value, field) };
  }
  if (parsed.maxTokens !== undefined && parsed.minTokens > parsed.maxTokens) {
    throw new InferenceError('INVALID_ARG', `sampling parameter 'min_tokens' (${parsed.minTokens}) must not exceed 'max_tokens' (${parsed.maxTokens})`);
  }
  return parsed;
}

/** Reads the `sampling_parameters` tensor's JSON text. */
export function parseSamplingJson(text: string): SamplingParameters {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new InferenceError('INVALID_ARG', `input 'sampling_parameters' is not JSON: ${(error as Error).message}`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new InferenceError('INVALID_ARG', `input 'sampling_parameters' must be a JSON object`);
  return parseSamplingParameters(json as Record<string, unknown>);
}
