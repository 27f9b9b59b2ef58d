import { describe, expect, it } from 'vitest';
import { DEFAULT_SAMPLING, parseSamplingParameters } from '../src/sampling-parameters.js';

describe('parseSamplingParameters', () => {
  it("fills vLLM's defaults", () => {
    expect(parseSamplingParameters({})).toEqual(DEFAULT_SAMPLING);
    expect(DEFAULT_SAMPLING).toMatchObject({ temperature: 1, topP: 1, topK: 0, maxTokens: 16, repetitionPenalty: 1 });
  });

  it('reads every supported field, numbers and booleans also as strings', () => {
    const parsed = parseSamplingParameters({
      temperature: '0.5',
      top_p: 0.9,
      top_k: -1,
      min_p: 0.1,
      max_tokens: '32',
      min_tokens: 2,
      stop: 'END',
      stop_token_ids: [2, 7],
      include_stop_str_in_output: 'true',
      ignore_eos: true,
      skip_special_tokens: false,
      seed: 42,
      repetition_penalty: 1.1,
      frequency_penalty: -0.5,
      presence_penalty: 0.5,
      n: 1,
      logprobs: 3,
    });
    expect(parsed).toEqual({
      temperature: 0.5,
      topP: 0.9,
      topK: 0,
      minP: 0.1,
      maxTokens: 32,
      minTokens: 2,
      stop: ['END'],
      stopTokenIds: [2, 7],
      includeStopStrInOutput: true,
      ignoreEos: true,
      skipSpecialTokens: false,
      seed: 42,
      repetitionPenalty: 1.1,
      frequencyPenalty: -0.5,
      presencePenalty: 0.5,
      logprobs: 3,
    });
  });

  it('takes null max_tokens as "until the context is full" and null stop as none', () => {
    expect(parseSamplingParameters({ max_tokens: null, stop: null })).toMatchObject({ maxTokens: undefined, stop: [] });
  });

  it('bounds repetition_penalty only below, as vLLM does', () => {
    expect(parseSamplingParameters({ repetition_penalty: 2.5 }).repetitionPenalty).toBe(2.5);
    expect(() => parseSamplingParameters({ repetition_penalty: 0 })).toThrow("sampling parameter 'repetition_penalty' must be a number > 0, not 0");
  });

  it.each([
    [{ min_p: 1.5 }, 'min_p'],
    [{ min_tokens: -1 }, 'min_tokens'],
    [{ stop: [''] }, 'stop'],
    [{ stop_token_ids: 3 }, 'stop_token_ids'],
    [{ stop_token_ids: [-1] }, 'stop_token_ids'],
    [{ ignore_eos: 'yes' }, 'ignore_eos'],
    [{ max_tokens: 4, min_tokens: 5 }, 'min_tokens'],
    [{ logprobs: -1 }, 'logprobs'],
  ])('refuses %j naming %s', (fields, field) => {
    expect(() => parseSamplingParameters(fields)).toThrow(expect.objectContaining({ code: 'INVALID_ARG', message: expect.stringContaining(`'${field}'`) }));
  });
});
