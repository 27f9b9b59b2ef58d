import { describe, expect, it } from 'vitest';
import { OutputText } from '../src/output-text.js';

// A vocabulary of one character per token, and two tokens that are the halves of 'é' in UTF-8.
const SPLIT_FIRST = 1000;
const SPLIT_SECOND = 1001;
const detokenize = (tokens: readonly number[]) => {
  const bytes = tokens.flatMap((t) => (t === SPLIT_FIRST ? [0xc3] : t === SPLIT_SECOND ? [0xa9] : [...Buffer.from(String.fromCharCode(t))]));
  return Buffer.from(bytes).toString('utf8');
};
const codes = (text: string) => [...text].map((c) => c.charCodeAt(0));

function feed(output: OutputText, tokens: number[]): { stopped: boolean; parts: string[] } {
  const parts: string[] = [];
  for (const token of tokens) {
    if (output.push(token)) return { stopped: true, parts: [...parts, output.take(true)] };
    parts.push(output.take(false));
  }
  return { stopped: false, parts: [...parts, output.take(true)] };
}

describe('OutputText', () => {
  it('releases whole characters only: a token ending inside one waits for the next', () => {
    const output = new OutputText(detokenize, [], [], false);
    const { parts } = feed(output, [...codes('ab'), SPLIT_FIRST, SPLIT_SECOND, ...codes('c')]);
    expect(parts).toEqual(['a', 'b', '', 'é', 'c', '']);
  });

  it('gives bytes that never complete a character as U+FFFD at the end', () => {
    const { parts } = feed(new OutputText(detokenize, [], [], false), [...codes('a'), SPLIT_FIRST]);
    expect(parts.join('')).toBe('a\uFFFD');
  });

  it('cuts at the earliest stop string and holds back what may start one', () => {
    const output = new OutputText(detokenize, [], ['END', 'xy'], false);
    const { stopped, parts } = feed(output, codes('abcENxENDmore'));
    expect(stopped).toBe(true);
    expect(parts.join('')).toBe('abcENx');
    // 'E' and 'EN' were held back until 'x' showed they start no stop string; 'x' until the next 'E'.
    expect(parts.slice(0, 7)).toEqual(['a', 'b', 'c', '', '', 'EN', 'x']);
  });

  it('keeps the stop string when asked, and finds one that spans tokens', () => {
    const { parts } = feed(new OutputText(detokenize, [], ['cd'], true), codes('abcdef'));
    expect(parts.join('')).toBe('abcd');
  });

  it('counts every token pushed', () => {
    const output = new OutputText(detokenize, [], [], false);
    feed(output, codes('hello'));
    expect(output.tokenCount).toBe(5);
    expect(output.outputTokens()).toEqual(codes('hello'));
  });
});
