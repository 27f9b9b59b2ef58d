import { describe, expect, it } from 'vitest';
import { choiceParameter } from '@tritium/core/backend';
import type { ModelConfig } from '@tritium/core/backend';

const withParameter = (value?: string): ModelConfig => ({ name: 'm', parameters: value === undefined ? {} : { mode: { string_value: value } } });
const MODES = { fast: 'the quick way', slow: '', auto: 'either' };

describe('a parameter that takes one of several values', () => {
  it('is read in any case and given back in lower case; absent or blank, undefined', () => {
    expect(choiceParameter(withParameter(' Fast '), 'mode', MODES)).toBe('fast');
    expect(choiceParameter(withParameter('SLOW'), 'mode', MODES)).toBe('slow');
    expect(choiceParameter(withParameter(), 'mode', MODES)).toBeUndefined();
    expect(choiceParameter(withParameter('  '), 'mode', MODES)).toBeUndefined();
  });

  it('refuses another value, naming the model, the value as written and each choice with its meaning', () => {
    expect(() => choiceParameter(withParameter('Sideways'), 'mode', MODES)).toThrow(
      `model 'm': parameter 'mode' is 'Sideways', expected "fast" (the quick way), "slow" or "auto" (either)`,
    );
    expect(() => choiceParameter(withParameter('constructor'), 'mode', MODES)).toThrow(/parameter 'mode' is 'constructor'/);
  });
});
