import type { VllmLogprobs } from './generation-output.js';

/** One generated token and its candidates, best first (the chosen one is vLLM's rank 1, or the likeliest). */
interface TokenCandidates {
  readonly chosen: Candidate;
  readonly candidates: readonly Candidate[];
}

interface Candidate {
  readonly token: string;
  readonly logprob: number;
}

function tokensOf(logprobs: VllmLogprobs): TokenCandidates[] {
  return logprobs.flatMap((position) => {
    if (!position) return [];
    const ranked = Object.values(position).sort((a, b) => (a.rank ?? Number.MAX_SAFE_INTEGER) - (b.rank ?? Number.MAX_SAFE_INTEGER) || b.logprob - a.logprob);
    const candidates = ranked.map(({ decoded_token, logprob }) => ({ token: decoded_token, logprob }));
    return candidates.length === 0 ? [] : [{ chosen: candidates[0]!, candidates }];
  });
}

const utf8 = (token: string) => [...Buffer.from(token, 'utf8')];

/** Chat's `logprobs`: `{content: [{token, logprob, bytes, top_logprobs}]}`. */
export function chatLogprobs(logprobs: VllmLogprobs) {
  return {
    content: tokensOf(logprobs).map(({ chosen, candidates }) => ({
      ...chosen,
      bytes: utf8(chosen.token),
      top_logprobs: candidates.map((candidate) => ({ ...candidate, bytes: utf8(candidate.token) })),
    })),
  };
}

/** Completions' `logprobs`: parallel lists, text offsets counted from `offset` (the text sent before). */
export function completionLogprobs(logprobs: VllmLogprobs, offset: number) {
  const tokens = tokensOf(logprobs);
  const textOffset: number[] = [];
  let at = offset;
  for (const { chosen } of tokens) {
    textOffset.push(at);
    at += chosen.token.length;
  }
  return {
    tokens: tokens.map(({ chosen }) => chosen.token),
    token_logprobs: tokens.map(({ chosen }) => chosen.logprob),
    top_logprobs: tokens.map(({ candidates }) => Object.fromEntries(candidates.map(({ token, logprob }) => [token, logprob]))),
    text_offset: textOffset,
  };
}
