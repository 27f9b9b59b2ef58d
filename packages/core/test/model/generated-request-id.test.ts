import { describe, expect, it } from 'vitest';
import { generatedRequestId } from '../../src/model/generated-request-id.js';

describe('generatedRequestId', () => {
  it('counts up in plain decimal across thousands, without leading zeros', () => {
    const first = Number(generatedRequestId());
    // 2,500 in a row cross at least two thousands, wherever the counter stands.
    const ids = Array.from({ length: 2500 }, generatedRequestId);
    expect(ids).toEqual(ids.map((_, i) => String(first + 1 + i)));
  });
});
